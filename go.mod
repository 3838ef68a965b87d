module github.com/textarmor/textarmor

go 1.26.8

require gonum.org/v1/gonum v0.17.0

require golang.org/x/text v0.44.0
