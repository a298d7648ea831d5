module github.com/watch-doctor/watch-doctor/hack/shapes/v1.34

go 1.26.0

require k8s.io/apiserver v0.34.4
