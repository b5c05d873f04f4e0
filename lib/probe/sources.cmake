# The probe (relative to lib/).
set(KGLM_PROBE_SOURCES
  probe/cloze_decoder.cpp
  probe/cloze_text.cpp
  probe/masked_lm.cpp
  probe/probe.cpp
  probe/probe_facts.cpp
  probe/probe_scores.cpp
)
