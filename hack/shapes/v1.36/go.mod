module github.com/watch-doctor/watch-doctor/hack/shapes/v1.36

go 1.26.0

require k8s.io/apiserver v0.36.3
