// Command podprobe is a pod for RunDeployment's test: with the in-cluster
// configuration, it records who the API server says it is, what its
// ServiceAccount files and environment say, and whether it reached
// another address than the API server, in a ConfigMap named after its
// pod; then it serves /readyz on its PROBE_PORT.
package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run() error {
	cfg, err := rest.InClusterConfig()
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx := context.Background()
	who, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	ns, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
	if err != nil {
		return err
	}
	reached := "no"
	if addr := os.Getenv("OUTSIDE"); addr != "" {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			reached = "yes"
		}
	}
	host, _ := os.Hostname()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: os.Getenv("POD_NAME")}, Data: map[string]string{
		"hostname": host,
		"user":     who.Status.UserInfo.Username, "namespace": string(ns), "watch": os.Getenv("WATCH_NAMESPACE"),
		"greeting": os.Getenv("GREETING"), "args": fmt.Sprint(os.Args[1:]), "outside": reached}}
	if _, err := cs.CoreV1().ConfigMaps(string(ns)).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		return err
	}
	http.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "ok") })
	return http.ListenAndServe(":"+os.Getenv("PROBE_PORT"), nil)
}
