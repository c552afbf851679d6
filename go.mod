module github.com/goa2a/a2a

go 1.25.0
