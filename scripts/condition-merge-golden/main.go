// Command condition-merge-golden answers merge cases with upstream Cluster API v1.14's util/conditions, so that
// clusterclass.api.condition_merge is held to upstream's own status, reason and message (see README.md).
//
// It reads a JSON list of cases on stdin and writes a JSON list of {status, reason, message} on stdout.
package main

import (
	"encoding/json"
	"os"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
)

type object struct {
	Kind         string             `json:"kind"`
	Name         string             `json:"name"`
	ControlPlane bool               `json:"controlPlane"`
	Conditions   []metav1.Condition `json:"conditions"`
}

type mergeCase struct {
	Operation        string   `json:"operation"`
	Objects          []object `json:"objects"`
	SourceType       string   `json:"sourceType"`
	TargetType       string   `json:"targetType"`
	ForTypes         []string `json:"forTypes"`
	NegativePolarity []string `json:"negativePolarity"`
	IgnoreIfMissing  []string `json:"ignoreIfMissing"`
	Reasons          []string `json:"reasons"`
}

type result struct {
	Status  metav1.ConditionStatus `json:"status"`
	Reason  string                 `json:"reason"`
	Message string                 `json:"message"`
}

func getter(o object) conditions.Getter {
	meta := metav1.ObjectMeta{Name: o.Name}
	if o.ControlPlane {
		meta.Labels = map[string]string{clusterv1.MachineControlPlaneLabel: ""}
	}
	switch o.Kind {
	case "MachineDeployment":
		md := &clusterv1.MachineDeployment{ObjectMeta: meta}
		md.Kind = o.Kind
		md.Status.Conditions = o.Conditions
		return md
	case "MachineSet":
		ms := &clusterv1.MachineSet{ObjectMeta: meta}
		ms.Kind = o.Kind
		ms.Status.Conditions = o.Conditions
		return ms
	default:
		m := &clusterv1.Machine{ObjectMeta: meta}
		m.Kind = "Machine"
		m.Status.Conditions = o.Conditions
		return m
	}
}

func strategy(c mergeCase) conditions.MergeStrategy {
	opts := []conditions.DefaultMergeStrategyOption{
		conditions.GetPriorityFunc(conditions.GetDefaultMergePriorityFunc(c.NegativePolarity...)),
	}
	if len(c.Reasons) == 3 {
		opts = append(opts, conditions.ComputeReasonFunc(conditions.GetDefaultComputeMergeReasonFunc(c.Reasons[0], c.Reasons[1], c.Reasons[2])))
	}
	return conditions.DefaultMergeStrategy(opts...)
}

func answer(c mergeCase) (*metav1.Condition, error) {
	if c.Operation == "summary" {
		opts := []conditions.SummaryOption{
			conditions.ForConditionTypes(c.ForTypes),
			conditions.CustomMergeStrategy{MergeStrategy: strategy(c)},
		}
		if len(c.IgnoreIfMissing) > 0 {
			opts = append(opts, conditions.IgnoreTypesIfMissing(c.IgnoreIfMissing))
		}
		return conditions.NewSummaryCondition(getter(c.Objects[0]), c.TargetType, opts...)
	}
	objects := make([]conditions.Getter, 0, len(c.Objects))
	for _, o := range c.Objects {
		objects = append(objects, getter(o))
	}
	return conditions.NewAggregateCondition(objects, c.SourceType,
		conditions.TargetConditionType(c.TargetType), conditions.CustomMergeStrategy{MergeStrategy: strategy(c)})
}

func main() {
	var cases []mergeCase
	if err := json.NewDecoder(os.Stdin).Decode(&cases); err != nil {
		panic(err)
	}
	results := make([]result, 0, len(cases))
	for _, c := range cases {
		condition, err := answer(c)
		if err != nil {
			panic(err)
		}
		results = append(results, result{condition.Status, condition.Reason, condition.Message})
	}
	encoder := json.NewEncoder(os.Stdout)
	encoder.SetIndent("", "  ")
	encoder.SetEscapeHTML(false)
	if err := encoder.Encode(results); err != nil {
		panic(err)
	}
}
