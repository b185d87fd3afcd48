  1 run.started                       [] running
  2 agent.started     collector       [collector] via run
  3 model.started     collector       [collector]
  4 model.finished    collector       [collector]
  5 message           collector       [collector] assistant
  6 tool.started      collector       [collector] list_merged_prs collector_call_1
  7 tool.finished     collector       [collector] list_merged_prs collector_call_1
  8 message           collector       [collector] tool
  9 model.started     collector       [collector]
 10 model.finished    collector       [collector]
 11 message           collector       [collector] assistant
 12 message           collector       [collector] assistant
 13 message           collector       [collector] tool
 14 transfer          collector       [collector] collector -> writer (deterministic)
 15 agent.finished    collector       [collector]
 16 agent.started     writer          [collector>writer] via transfer
 17 session.set       collector       [collector] changes set by collector
 18 model.started     writer          [collector>writer]
 19 model.finished    writer          [collector>writer]
 20 message           writer          [collector>writer] assistant
 21 message           writer          [collector>writer] assistant
 22 message           writer          [collector>writer] tool
 23 transfer          writer          [collector>writer] writer -> editor (deterministic)
 24 agent.finished    writer          [collector>writer]
 25 agent.started     editor          [collector>writer>editor] via transfer
 26 session.set       writer          [collector>writer] draft set by writer
 27 model.started     editor          [collector>writer>editor>editor]
 28 model.finished    editor          [collector>writer>editor>editor]
 29 message           editor          [collector>writer>editor>editor] assistant
 30 tool.started      editor          [collector>writer>editor>editor] transfer_to_agent editor_call_1
 31 tool.finished     editor          [collector>writer>editor>editor] transfer_to_agent editor_call_1
 32 message           editor          [collector>writer>editor>editor] tool
 33 transfer          editor          [collector>writer>editor] editor -> fact_checker (llm)
 34 agent.finished    editor          [collector>writer>editor]
 35 agent.started     fact_checker    [collector>writer>editor>editor>fact_checker] via transfer
 36 model.started     fact_checker    [collector>writer>editor>editor>fact_checker]
 37 model.finished    fact_checker    [collector>writer>editor>editor>fact_checker]
 38 message           fact_checker    [collector>writer>editor>editor>fact_checker] assistant
 39 tool.started      fact_checker    [collector>writer>editor>editor>fact_checker] verify_prs fact_checker_call_1
 40 tool.finished     fact_checker    [collector>writer>editor>editor>fact_checker] verify_prs fact_checker_call_1
 41 message           fact_checker    [collector>writer>editor>editor>fact_checker] tool
 42 session.set       fact_checker    [collector>writer>editor>editor>fact_checker] verified_changes set by fact_checker
 43 model.started     fact_checker    [collector>writer>editor>editor>fact_checker]
 44 model.finished    fact_checker    [collector>writer>editor>editor>fact_checker]
 45 message           fact_checker    [collector>writer>editor>editor>fact_checker] assistant
 46 tool.started      fact_checker    [collector>writer>editor>editor>fact_checker] transfer_to_agent fact_checker_call_2
 47 tool.finished     fact_checker    [collector>writer>editor>editor>fact_checker] transfer_to_agent fact_checker_call_2
 48 message           fact_checker    [collector>writer>editor>editor>fact_checker] tool
 49 transfer          fact_checker    [collector>writer>editor>editor>fact_checker] fact_checker -> editor (llm)
 50 agent.finished    fact_checker    [collector>writer>editor>editor>fact_checker]
 51 agent.started     editor          [collector>writer>editor>editor>fact_checker>editor] via transfer
 52 model.started     editor          [collector>writer>editor>editor>fact_checker>editor]
 53 model.finished    editor          [collector>writer>editor>editor>fact_checker>editor]
 54 message           editor          [collector>writer>editor>editor>fact_checker>editor] assistant
 55 tool.started      editor          [collector>writer>editor>editor>fact_checker>editor] publish_notes editor_call_2
 56 tool.finished     editor          [collector>writer>editor>editor>fact_checker>editor] publish_notes editor_call_2
 57 message           editor          [collector>writer>editor>editor>fact_checker>editor] tool
 58 model.started     editor          [collector>writer>editor>editor>fact_checker>editor]
 59 model.finished    editor          [collector>writer>editor>editor>fact_checker>editor]
 60 message           editor          [collector>writer>editor>editor>fact_checker>editor] assistant
 61 agent.finished    editor          [collector>writer>editor>editor>fact_checker>editor]
 62 run.finished                      [] completed
