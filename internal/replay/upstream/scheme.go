package upstream

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apiserver/pkg/apis/example"
	examplev1 "k8s.io/apiserver/pkg/apis/example/v1"
)

// The objects of the upstream column are k8s.io/apiserver's example Pods
// (the type its own cacher and storage tests use), stored as protobuf of
// example/v1 like those tests' etcd stores do.
var (
	scheme = runtime.NewScheme()
	// codec encodes example.Pod as example/v1 protobuf and decodes to the
	// internal type.
	codec runtime.Codec
)

func init() {
	metav1.AddToGroupVersion(scheme, metav1.SchemeGroupVersion)
	utilruntime.Must(example.AddToScheme(scheme))
	utilruntime.Must(examplev1.AddToScheme(scheme))
	pb := protobuf.NewSerializer(scheme, scheme)
	codec = serializer.NewCodecFactory(scheme).CodecForVersions(pb, pb, schema.GroupVersions{examplev1.SchemeGroupVersion}, nil)
}

// NewPod and NewPodList are the store's and the cacher's NewFunc and
// NewListFunc.
func NewPod() runtime.Object     { return &example.Pod{} }
func NewPodList() runtime.Object { return &example.PodList{} }
