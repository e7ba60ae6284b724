package testcluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"
)

const fakeNodeAnnotation = "kwok.x-k8s.io/node"

// StageGVR is the resource of kwok's Stage objects, which drive the
// lifecycle of pods and nodes.
var StageGVR = schema.GroupVersionResource{Group: "kwok.x-k8s.io", Version: "v1alpha1", Resource: "stages"}

// setupKwok installs the Stage CRD, the default stages from dataDir and the
// fake nodes. kwok itself starts afterwards and picks them up.
func (c *Cluster) setupKwok(ctx context.Context, dataDir string, nodes int) error {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := readYAML(filepath.Join(dataDir, "crd-stages.yaml"), crd); err != nil {
		return err
	}
	if err := c.installCRD(ctx, crd); err != nil {
		return err
	}
	files, err := filepath.Glob(filepath.Join(dataDir, "stages", "*.yaml"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no kwok stages in %s: run `make testbin`", dataDir)
	}
	slices.Sort(files)
	for _, f := range files {
		stage := &unstructured.Unstructured{}
		if err := readYAML(f, &stage.Object); err != nil {
			return err
		}
		if err := c.createStage(ctx, stage); err != nil {
			return err
		}
	}
	for i := range nodes {
		if err := c.createNode(ctx, fmt.Sprintf("kwok-node-%d", i)); err != nil {
			return err
		}
	}
	return nil
}

func (c *Cluster) installCRD(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) error {
	cs, err := apiextensionsclient.NewForConfig(c.Config)
	if err != nil {
		return fmt.Errorf("creating apiextensions client: %w", err)
	}
	if _, err := cs.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating CRD %s: %w", crd.Name, err)
	}
	return c.waitFor(ctx, "CRD "+crd.Name+" established", func(ctx context.Context) error {
		got, err := cs.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, cond := range got.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return nil
			}
		}
		return errNotReady
	})
}

func (c *Cluster) createStage(ctx context.Context, stage *unstructured.Unstructured) error {
	dc, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		return fmt.Errorf("creating dynamic client: %w", err)
	}
	if _, err := dc.Resource(StageGVR).Create(ctx, stage, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating kwok stage %s: %w", stage.GetName(), err)
	}
	return nil
}

func (c *Cluster) createNode(ctx context.Context, name string) error {
	// Large enough for the benchmarks: make bench-shards N=1000 runs two
	// thousand tenants' pods, plus warm-ups, on one control plane. Like a
	// kubelet's node, it has ephemeral storage, which pods may request.
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse("512"),
		corev1.ResourceMemory:           resource.MustParse("2Ti"),
		corev1.ResourceEphemeralStorage: resource.MustParse("10Ti"),
		corev1.ResourcePods:             resource.MustParse("5000"),
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{fakeNodeAnnotation: "fake"},
			Labels: map[string]string{
				"kubernetes.io/hostname": name,
				"kubernetes.io/os":       "linux",
				"kubernetes.io/arch":     "amd64",
				"type":                   "kwok",
			},
		},
		Status: corev1.NodeStatus{Capacity: capacity, Allocatable: capacity},
	}
	if _, err := c.Client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating node %s: %w", name, err)
	}
	return nil
}

func (c *Cluster) nodesReady(ctx context.Context) error {
	nodes, err := c.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	if len(nodes.Items) == 0 {
		return fmt.Errorf("%w: no nodes", errNotReady)
	}
	for _, n := range nodes.Items {
		if !nodeReady(&n) {
			return fmt.Errorf("%w: node %s", errNotReady, n.Name)
		}
		if len(n.Spec.Taints) > 0 {
			return fmt.Errorf("%w: node %s still has taints %v", errNotReady, n.Name, n.Spec.Taints)
		}
	}
	return nil
}

func nodeReady(n *corev1.Node) bool {
	for _, cond := range n.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}

// AddStage creates a kwok Stage and returns a function that deletes it.
// Give the stage a weight above zero to take precedence over the default
// stages for the objects it selects.
func (c *Cluster) AddStage(ctx context.Context, stage *unstructured.Unstructured) (remove func(context.Context) error, err error) {
	if err := c.createStage(ctx, stage); err != nil {
		return nil, err
	}
	return func(ctx context.Context) error {
		dc, err := dynamic.NewForConfig(c.Config)
		if err != nil {
			return err
		}
		if err := dc.Resource(StageGVR).Delete(ctx, stage.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting kwok stage %s: %w", stage.GetName(), err)
		}
		return nil
	}, nil
}

// NeverReadyStage returns a stage that moves pending pods whose first
// container runs image to Running with Ready=False, where they stay. It
// outweighs the default pod-ready stage.
func NeverReadyStage(name, image string) *unstructured.Unstructured {
	return imageStage(name, image, "Pending", neverReadyStatus)
}

// FailedPodStage returns a stage that fails running pods whose first
// container runs image, as a container that exits 1 after writing the
// termination message held in the pod's annotation messageAnnotation. It
// outweighs the default pod-complete stage of Job pods.
func FailedPodStage(name, image, messageAnnotation string) *unstructured.Unstructured {
	return imageStage(name, image, "Running", terminatedStatus(`"1"`, `index .metadata.annotations "`+messageAnnotation+`"`))
}

// terminatedStatus is a status template whose containers all exited with
// the code and message that the template expressions code and message
// give: Succeeded for code 0, else Failed.
func terminatedStatus(code, message string) string {
	return `{{ $now := Now }}
{{ $code := ` + code + ` }}
{{ $msg := ` + message + ` }}
containerStatuses:
{{ range .spec.containers }}
- image: {{ .image | Quote }}
  name: {{ .name | Quote }}
  ready: false
  restartCount: 0
  started: false
  state:
    terminated:
      exitCode: {{ $code }}
      reason: {{ if eq $code "0" }}Completed{{ else }}Error{{ end }}
      message: {{ $msg | Quote }}
      startedAt: {{ $now | Quote }}
      finishedAt: {{ $now | Quote }}
{{ end }}
phase: {{ if eq $code "0" }}Succeeded{{ else }}Failed{{ end }}
`
}

// imageStage moves pods in phase whose first container runs image to the
// status of statusTemplate, ahead of the default stages.
func imageStage(name, image, phase, statusTemplate string) *unstructured.Unstructured {
	return PodStage(name, phase, statusTemplate, map[string]any{"key": ".spec.containers.[0].image", "operator": "In", "values": []any{image}})
}

// PodStage returns a stage that moves pods in phase that match every one
// of the extra kwok match expressions to the status of statusTemplate,
// ahead of the default stages.
func PodStage(name, phase, statusTemplate string, match ...map[string]any) *unstructured.Unstructured {
	exprs := []any{
		map[string]any{"key": ".metadata.deletionTimestamp", "operator": "DoesNotExist"},
		map[string]any{"key": ".status.phase", "operator": "In", "values": []any{phase}},
	}
	for _, m := range match {
		exprs = append(exprs, m)
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kwok.x-k8s.io/v1alpha1",
		"kind":       "Stage",
		"metadata":   map[string]any{"name": name},
		"spec": map[string]any{
			"resourceRef": map[string]any{"apiGroup": "v1", "kind": "Pod"},
			"weight":      int64(100),
			"selector":    map[string]any{"matchExpressions": exprs},
			"next":        map[string]any{"statusTemplate": statusTemplate},
		},
	}}
}

// CrashLoopStatus is a status template of a pod whose containers keep
// crashing: Running, not ready, waiting in CrashLoopBackOff.
const CrashLoopStatus = `{{ $now := Now }}
conditions:
- lastTransitionTime: {{ $now | Quote }}
  status: "False"
  reason: ContainersNotReady
  type: Ready
containerStatuses:
{{ range .spec.containers }}
- image: {{ .image | Quote }}
  name: {{ .name | Quote }}
  ready: false
  restartCount: 4
  started: false
  state:
    waiting:
      reason: CrashLoopBackOff
      message: back-off 1m20s restarting failed container
{{ end }}
phase: Running
startTime: {{ $now | Quote }}
`

const neverReadyStatus = `{{ $now := Now }}
conditions:
- lastTransitionTime: {{ $now | Quote }}
  status: "True"
  type: Initialized
- lastTransitionTime: {{ $now | Quote }}
  status: "False"
  reason: ContainersNotReady
  type: Ready
- lastTransitionTime: {{ $now | Quote }}
  status: "False"
  reason: ContainersNotReady
  type: ContainersReady
containerStatuses:
{{ range .spec.containers }}
- image: {{ .image | Quote }}
  name: {{ .name | Quote }}
  ready: false
  restartCount: 0
  started: true
  state:
    running:
      startedAt: {{ $now | Quote }}
{{ end }}
phase: Running
startTime: {{ $now | Quote }}
`

func readYAML(path string, into any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	if err := yaml.Unmarshal(b, into); err != nil {
		return fmt.Errorf("parsing %s: %w", path, err)
	}
	return nil
}

// InstallCRDs creates every CustomResourceDefinition in the YAML files of
// dir (one per file) and waits until they are established. CRDs that
// already exist are left as they are.
func (c *Cluster) InstallCRDs(ctx context.Context, dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no CRD files in %s", dir)
	}
	slices.Sort(files)
	for _, f := range files {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := readYAML(f, crd); err != nil {
			return err
		}
		if err := c.installCRD(ctx, crd); err != nil {
			return err
		}
	}
	return nil
}

// The annotations a test sets on a pod held by KubeletStages to end it:
// the termination message and the exit code.
const (
	KubeletResultAnnotation   = "kwokresult"
	KubeletExitCodeAnnotation = "kwokexit"
)

// KubeletStages return stages that let a test play the kubelet for pods
// whose first container runs image: once Running they stay so (instead of
// kwok completing Job pods at once), until the test runs the container's
// program itself and sets KubeletExitCodeAnnotation and
// KubeletResultAnnotation; the pod then ends Succeeded (exit code 0) or
// Failed, with the result as every container's termination message.
func KubeletStages(name, image string) []*unstructured.Unstructured {
	exit := ".metadata.annotations." + KubeletExitCodeAnnotation
	hold := PodStage(name+"-hold", "Running", neverReadyStatus,
		map[string]any{"key": ".spec.containers.[0].image", "operator": "In", "values": []any{image}},
		map[string]any{"key": exit, "operator": "DoesNotExist"})
	hold.Object["spec"].(map[string]any)["delay"] = map[string]any{"durationMilliseconds": int64(time.Hour / time.Millisecond)}
	end := PodStage(name+"-end", "Running",
		terminatedStatus(`index .metadata.annotations "`+KubeletExitCodeAnnotation+`"`, `index .metadata.annotations "`+KubeletResultAnnotation+`"`),
		map[string]any{"key": ".spec.containers.[0].image", "operator": "In", "values": []any{image}},
		map[string]any{"key": exit, "operator": "Exists"})
	return []*unstructured.Unstructured{hold, end}
}
