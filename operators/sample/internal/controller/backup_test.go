package controller_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcluster"
	kvv1 "opctl.dev/opctl/operators/sample/api/v1alpha1"
	"opctl.dev/opctl/operators/sample/internal/controller"
	"opctl.dev/opctl/operators/sample/internal/instance"
	"opctl.dev/opctl/operators/sample/internal/instance/instancetest"
)

// TestBackupAndRestore takes a KVBackup of a store whose server is a real
// process: the operator starts the backup Job, the test plays the kubelet
// (it runs the Job's command, the operator binary's backup program, and
// reports its exit and termination message), and the KVBackup records the
// verified snapshot. A new store with spec.restore then starts from it:
// the test runs the StatefulSet's restore init container the same way,
// starts the pod's server on the restored data, and compares every key.
func TestBackupAndRestore(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	bin := manager(t)
	for _, s := range testcluster.KubeletStages("kv-tools", toolsImage) {
		remove, err := c.AddStage(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = remove(context.Background()) })
	}
	ns := c.Namespace(t, "kv-backup", restricted)
	class := ns + "-class"
	storageClass(t, class, false, 1)
	create(t, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "backups"}, Spec: corev1.PersistentVolumeClaimSpec{
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, StorageClassName: ptr.To(class),
		Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
	}})
	claimDir := t.TempDir() // what the claim holds, as the kubelet would mount it

	srv := serveStore(t, ns, "bk", 1)
	k := dataPathStore(ns, "bk", 1)
	k.Spec.Backup = &kvv1.BackupSpec{Target: kvv1.BackupTarget{PersistentVolumeClaim: &kvv1.ClaimTarget{ClaimName: "backups"}}}
	create(t, k)
	waitKV(t, k, "KVStore Ready", readyWith(1, kvv1.DefaultVersion))
	const n = 500
	conn, err := instance.Dial(ctx, srv["bk-0"].Target(), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if _, err := conn.Do("SET", fmt.Sprintf("k%d", i), fmt.Sprintf("value-%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	conn.Close()

	stop := phases(t, k)
	b := &kvv1.KVBackup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bk-manual", Labels: map[string]string{suiteLabel: "datapath"}},
		Spec: kvv1.KVBackupSpec{Store: "bk"}}
	create(t, b)
	pod := heldPod(t, ns, "bk-manual")
	container := pod.Spec.Containers[0]
	if container.Image != toolsImage || !slices.Contains(container.Args, srv["bk-0"].Addr()) {
		t.Fatalf("backup container %s %v, want the tools image snapshotting %s", container.Image, container.Args, srv["bk-0"].Addr())
	}
	waitKV(t, k, "store Servicing while the backup runs", conditionIs("Progressing", metav1.ConditionTrue, controller.ReasonBackingUp))
	kubelet(t, bin, pod, 0, map[string]string{controller.BackupMountPath: claimDir}, "VALKEY_PASSWORD="+instancetest.Password)

	testcluster.WaitObject(t, kube, b, wait, "KVBackup Succeeded", func(b *kvv1.KVBackup) error {
		if !b.Succeeded() {
			return fmt.Errorf("action %+v", b.Status.Action)
		}
		return testcluster.ReadyAt(b, b.Status.Conditions, b.Status.ObservedGeneration)
	})
	waitKV(t, k, "store Running after the backup", func(k *kvv1.KVStore) error {
		if k.Status.Phase != "Running" {
			return fmt.Errorf("phase %s", k.Status.Phase)
		}
		return ready(k)
	})
	seen := stop()
	t.Logf("backup: %d keys, %d bytes, sha256 %s in %s; store phases: %v", b.Status.Keys, b.Status.Size, b.Status.SHA256, b.Status.File, seen)
	if b.Status.Keys != n || b.Status.File != "bk/bk-manual.rdb" || b.Status.ClaimName != "backups" || b.Status.Source != "bk-0" {
		t.Errorf("backup status %+v", b.Status)
	}
	if !slices.Contains(seen, "Servicing/"+controller.ReasonBackingUp) {
		t.Errorf("phases %v, want Servicing/%s while the backup ran", seen, controller.ReasonBackingUp)
	}
	sum, err := os.ReadFile(filepath.Join(claimDir, "bk", "bk-manual.rdb.sha256"))
	if err != nil || !strings.HasPrefix(string(sum), b.Status.SHA256) {
		t.Errorf("checksum file %q (%v), want %s", sum, err, b.Status.SHA256)
	}

	// Restore into a new store.
	restoredDir := t.TempDir()
	r := dataPathStore(ns, "rs", 1)
	r.Spec.Restore = &kvv1.RestoreSpec{Backup: "bk-manual"}
	create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rs-auth"},
		Data: map[string][]byte{"password": []byte(instancetest.Password)}})
	create(t, r)
	var init corev1.Container
	testcluster.Eventually(t, wait, "the restore init container", func(ctx context.Context) error {
		s := &appsv1.StatefulSet{}
		if err := kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: "rs"}, s); err != nil {
			return err
		}
		if len(s.Spec.Template.Spec.InitContainers) != 1 {
			return fmt.Errorf("init containers %v", s.Spec.Template.Spec.InitContainers)
		}
		init = s.Spec.Template.Spec.InitContainers[0]
		return nil
	})
	restorePod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "rs-0"}, Spec: corev1.PodSpec{Containers: []corev1.Container{init}}}
	out := kubelet(t, bin, restorePod, 0, map[string]string{controller.BackupMountPath: claimDir, "/data": restoredDir}, "HOSTNAME=rs-0")
	t.Logf("restore init container: %s", strings.TrimSpace(out))
	restored := instancetest.Start(t, restoredDir, "appendonly yes")
	servers.Store(ns+"/rs-0", restored.Addr())
	t.Cleanup(func() { servers.Delete(ns + "/rs-0") })
	waitKV(t, r, "restored KVStore Ready", readyWith(1, kvv1.DefaultVersion))

	want, got := instancetest.Keys(t, srv["bk-0"], "k", n), instancetest.Keys(t, restored, "k", n)
	differ := instancetest.Missing(want, got)
	t.Logf("restore: %d of %d keys restored, %d differ", len(got), len(want), differ)
	if len(want) != n || len(got) != n || differ != 0 {
		t.Errorf("restored %d of %d keys, %d differ", len(got), len(want), differ)
	}
	// A second run of the init container, as after a pod restart, keeps
	// what the store holds.
	if out := kubelet(t, bin, restorePod, 0, map[string]string{controller.BackupMountPath: claimDir, "/data": restoredDir}, "HOSTNAME=rs-0"); !strings.Contains(out, "already holds data") {
		t.Errorf("second restore: %s", out)
	}
}

// heldPod waits for the Running pod of a KVBackup's Job, which the
// KubeletStages hold until the test ends it.
func heldPod(t *testing.T, ns, backup string) *corev1.Pod {
	t.Helper()
	var pod corev1.Pod
	testcluster.Eventually(t, wait, "the backup Job's pod running", func(ctx context.Context) error {
		b := &kvv1.KVBackup{}
		if err := kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: backup}, b); err != nil {
			return err
		}
		if b.Status.Action == nil || b.Status.Action.Job == "" {
			return fmt.Errorf("no Job yet: %+v", b.Status)
		}
		pods := &corev1.PodList{}
		if err := kube.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{batchv1.JobNameLabel: b.Status.Action.Job}); err != nil {
			return err
		}
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning {
				pod = p
				return nil
			}
		}
		return fmt.Errorf("%d pods, none running", len(pods.Items))
	})
	return &pod
}

// kubelet runs the pod's first container's command with the operator
// binary, its mounts mapped to local directories, and, for a pod in the
// cluster, reports the exit code and termination message as the kubelet
// would. It returns the output.
func kubelet(t *testing.T, bin string, pod *corev1.Pod, wantExit int, mounts map[string]string, env ...string) string {
	t.Helper()
	c := pod.Spec.Containers[0]
	if len(c.Command) == 0 || c.Command[0] != "/manager" {
		t.Fatalf("container %s runs %v, not the operator binary", c.Name, c.Command)
	}
	args := slices.Clone(c.Args)
	for i, a := range args {
		for mount, dir := range mounts {
			if a == mount || strings.HasPrefix(a, mount+"/") {
				args[i] = dir + strings.TrimPrefix(a, mount)
			}
		}
	}
	msgFile := filepath.Join(t.TempDir(), "termination-log")
	cmd := exec.Command(bin, append(c.Command[1:], args...)...)
	cmd.Env = append(os.Environ(), append(env, "TERMINATION_MESSAGE_PATH="+msgFile)...)
	out, err := cmd.CombinedOutput()
	code := 0
	if err != nil {
		code = 1
	}
	if code != wantExit {
		t.Fatalf("%v exited %d, want %d: %v\n%s", cmd.Args, code, wantExit, err, out)
	}
	if pod.Namespace == "" {
		return string(out)
	}
	msg, _ := os.ReadFile(msgFile)
	patch := client.MergeFrom(pod.DeepCopy())
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[testcluster.KubeletResultAnnotation] = string(msg)
	pod.Annotations[testcluster.KubeletExitCodeAnnotation] = fmt.Sprint(code)
	if err := kube.Patch(context.Background(), pod, patch); err != nil {
		t.Fatal(err)
	}
	return string(out)
}
