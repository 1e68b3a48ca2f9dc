// Package view is `swarm view`: a local, read-only web viewer of a runs
// directory. Pages are rendered on the server with html/template (which
// escapes everything a model wrote), from the run index (history) and the
// run directories; assets are embedded (embed.FS), nothing is fetched from
// the network, and the pages carry a strict Content-Security-Policy
// (scripts and styles only from the viewer itself, no inline script).
//
// The handler answers GET and HEAD only (anything else is 405), serves raw
// files only from inside the runs directory (os.Root: no "..", no absolute
// path, no symbolic link out of it), and, when it is told to serve only
// loopback clients, refuses a Host header that is not a loopback name (a
// page of another site reaching the viewer through DNS rebinding).
package view
