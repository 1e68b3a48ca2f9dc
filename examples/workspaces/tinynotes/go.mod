module example.com/tinynotes

go 1.24

require github.com/mattn/go-sqlite3 v1.14.22
