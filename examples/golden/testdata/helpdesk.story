route: triage > billing_agent
status: completed

1. triage, as the root, fed 1 from the user
   hands off to billing_agent (llm)

2. billing_agent, by transfer from triage, fed 1 from the user, 2 from other agents (For context:)
   says "billing_agent here: it is taken care of."

answer by billing_agent: "billing_agent here: it is taken care of."
