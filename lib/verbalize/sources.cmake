# The neural verbaliser (verbalize train, generate, evaluate, filter), relative to lib/.
set(KGLM_VERBALIZE_SOURCES
  verbalize/decoding.cpp
  verbalize/evaluation.cpp
  verbalize/generation.cpp
  verbalize/quality_filter.cpp
  verbalize/seq2seq_batch.cpp
  verbalize/text_metrics.cpp
  verbalize/verbalizer_model.cpp
  verbalize/verbalizer_records.cpp
  verbalize/verbalizer_training.cpp
)
