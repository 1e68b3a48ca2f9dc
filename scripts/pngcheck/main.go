// Command pngcheck exits non-zero when a PNG is blank: it counts distinct
// colours and non-white pixels, and expects charts (many colours, a real
// share of ink).
package main

import (
	"fmt"
	"image/png"
	"os"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: pngcheck FILE.png")
		os.Exit(2)
	}
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	b := img.Bounds()
	colours := map[[3]uint32]bool{}
	ink, total := 0, 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			colours[[3]uint32{r >> 8, g >> 8, bl >> 8}] = true
			if r>>8 < 240 || g>>8 < 240 || bl>>8 < 240 {
				ink++
			}
			total++
		}
	}
	share := float64(ink) / float64(total)
	fmt.Printf("%s: %dx%d, %d colours, %.1f%% non-white\n", os.Args[1], b.Dx(), b.Dy(), len(colours), 100*share)
	if len(colours) < 16 || share < 0.02 {
		fmt.Fprintln(os.Stderr, "screenshot looks blank")
		os.Exit(1)
	}
}
