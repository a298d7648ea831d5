module github.com/watch-doctor/watch-doctor/bench/peers

go 1.26.0

require (
	github.com/DataDog/gostackparse v0.7.0
	github.com/maruel/panicparse/v2 v2.5.0
)
