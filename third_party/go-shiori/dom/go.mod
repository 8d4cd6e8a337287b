module github.com/go-shiori/dom

go 1.20

require (
	github.com/andybalholm/cascadia v1.3.2
	golang.org/x/net v0.10.0
	golang.org/x/text v0.9.0
)
