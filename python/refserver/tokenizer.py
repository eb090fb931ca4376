"""A word tokenizer for random-weight models: no tokenizer files exist where the models have no
weights, so one whitespace-separated word is one token. A prompt of N words is N prompt tokens,
which makes the bench's input lengths exact; every generated token decodes to one non-empty word.
"""
import hashlib

# Words that decode from the first ids; any other id decodes to "w<id>".
WORDS = ("the of and to in is that it for on with as was at by be this are from or have an they which "
         "one you were her all she there would their we him been has when who will more no if out so said "
         "what up its about into than them can only other new some could time these two may then do first "
         "any my now such like our over man me even most made after also did many before must through back "
         "years where much your way well down should because each just those people how too little state good "
         "very make world still own see men work long get here between both life being under never day same "
         "another know while last might us great old year off come since against go came right used take "
         "three").split()


class WordTokenizer:
    """Maps words to ids in [0, vocab_size) and ids back to words. Known words take their index in
    WORDS; any other word hashes (SHA-1, stable across processes) into the ids above them."""

    def __init__(self, vocab_size):
        if vocab_size <= len(WORDS):
            raise ValueError(f"vocab_size {vocab_size}: the word tokenizer needs more than {len(WORDS)} ids")
        self.vocab_size = vocab_size
        self._index = {w: i for i, w in enumerate(WORDS)}

    def encode(self, text):
        ids = []
        for word in text.split():
            i = self._index.get(word)
            if i is None:
                h = int.from_bytes(hashlib.sha1(word.encode("utf-8")).digest()[:8], "little")
                i = len(WORDS) + h % (self.vocab_size - len(WORDS))
            ids.append(i)
        return ids

    def decode_one(self, token_id):
        """The text of one generated token: a space and a word, never empty."""
        return " " + (WORDS[token_id] if 0 <= token_id < len(WORDS) else f"w{token_id}")

    def chat_prompt(self, messages):
        """No chat template: the prompt is the words of every message's content, in order, so the
        prompt tokens of a chat request are its content words."""
        return " ".join(m["content"] for m in messages)
