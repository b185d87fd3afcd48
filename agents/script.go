package agents

// Script is a placeholder: the scripted model's replies for one agent (being written).
type Script struct{}
