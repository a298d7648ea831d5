module github.com/watch-doctor/watch-doctor/hack/shapes/v1.38

go 1.26.0

require k8s.io/apiserver v0.38.0-beta.0
