package agents

// TaskInputs returns the input each of flows runs when they are compared on one task: input for
// all when given; otherwise their shared default input, or, when their defaults differ (their
// scripts do different jobs), each flow's own. same reports whether every flow gets one input.
func TaskInputs(flows []Flow, input string) (inputs []string, same bool) {
	inputs = make([]string, len(flows))
	same = true
	for i, f := range flows {
		inputs[i] = input
		if input == "" {
			inputs[i] = f.DefaultInput
		}
		same = same && inputs[i] == inputs[0]
	}
	return inputs, same
}
