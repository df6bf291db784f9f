package ingress

import "k8s.io/apimachinery/pkg/api/equality"

func equalObjects(a, b any) bool { return equality.Semantic.DeepEqual(a, b) }
