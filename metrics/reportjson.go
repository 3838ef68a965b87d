package metrics

import "encoding/json"

// JSONWith is the report as one JSON object with extra's keys added (a
// command's --json output: the scores and what they were measured on).
func (r Report) JSONWith(extra map[string]any) (map[string]any, error) {
	raw, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	obj := map[string]any{}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, err
	}
	for k, v := range extra {
		obj[k] = v
	}
	return obj, nil
}
