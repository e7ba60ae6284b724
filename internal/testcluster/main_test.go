package testcluster

import (
	"os"
	"testing"
)

var cluster *Cluster

func TestMain(m *testing.M) { os.Exit(Main(m, &cluster)) }
