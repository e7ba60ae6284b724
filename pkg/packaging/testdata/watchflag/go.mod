module example.com/watchflag

go 1.24

require sigs.k8s.io/controller-runtime v0.24.1
