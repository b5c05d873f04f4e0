"""CTranslate2 models whose vocabulary is the token ids themselves ("0", "1", ...): kglm's benchmark
inputs are ids already (tokenised once, outside the timing), so the converter gets a tokenizer that
names each id by its number rather than the transformers tokenizer of the checkpoint, which a kglm
checkpoint's SentencePiece model may not make the same way."""
import os

from ctranslate2.converters import TransformersConverter


class IdsTokenizer:
    """What CTranslate2's transformers loaders read of a tokenizer, with ids for tokens."""

    def __init__(self, config):
        self.size = config.vocab_size
        self.pad_token, self.eos_token = str(config.pad_token_id), str(config.eos_token_id)
        self.bos_token = str(getattr(config, "bos_token_id", None) or 0)
        # <unk>: T5's SentencePiece id 2; fairseq's 3 in XLM-R (<s> <pad> </s> <unk>).
        self.unk_token = "2" if config.model_type == "t5" else "3"

    def get_vocab(self):
        return {str(i): i for i in range(self.size)}

    def convert_ids_to_tokens(self, i):
        return str(i)


class IdsConverter(TransformersConverter):
    def load_tokenizer(self, tokenizer_class, model_name_or_path, **kwargs):
        import transformers
        return IdsTokenizer(transformers.AutoConfig.from_pretrained(model_name_or_path))


def convert(model_dir, out):
    """The transformers directory model_dir as a CTranslate2 model in out (once)."""
    if not os.path.exists(os.path.join(out, "model.bin")):
        IdsConverter(model_dir).convert(out, force=True)
    return out
