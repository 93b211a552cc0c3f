"""What a model's files say around its vocabulary: chat template, named ids.

A Hugging Face tokenizer folder holds, beside `tokenizer.json`, a
`tokenizer_config.json` that names some tokens (`"eos_token": "<|im_end|>"`)
and may hold the model's chat template (`"chat_template": "{% for ..."`);
newer versions of transformers write the template to `chat_template.jinja`
instead, which then wins. A GGUF file says the same in its metadata
(gguf_file.py). Only these are read; the other settings of the file are
about how transformers pads, truncates or adds tokens around a text, which
`encode` never does.

From the tokens a file names, `end_ids` finds the two that generation stops
at: the end of a document and the end of a chat turn.
"""

import json
import pathlib

# end-of-turn and end-of-text tokens, by spelling, for files that name no
# eot id (llama.cpp finds them the same way)
END_OF_TURN = ("<|im_end|>", "<|eot_id|>", "<|end|>", "<end_of_turn>")
END_OF_TEXT = ("<|endoftext|>", "<|end_of_text|>")
NAMED = {"bos_token": "bos", "eos_token": "eos", "unk_token": "unk",
         "pad_token": "pad"}


def end_ids(special_tokens, special_ids):
    """(end of text, end of turn) ids of a model file's tokenizer, or None.

    End of text: the special token "<|endoftext|>" (or "<|end_of_text|>"),
    else the file's eos id. End of turn: the file's eot id, else a special
    token spelled like one (END_OF_TURN), else the eos id. SmolLM2's are 0
    ("<|endoftext|>") and 2 ("<|im_end|>", also its eos).

    >>> end_ids({"<|endoftext|>": 0, "<|im_end|>": 2}, {"eos": 2})
    (0, 2)
    >>> end_ids({}, {"eos": 7})
    (7, 7)
    """
    text = next((special_tokens[t] for t in END_OF_TEXT if t in special_tokens),
                special_ids.get("eos"))
    turn = special_ids.get("eot")
    if turn is None:
        turn = next((special_tokens[t] for t in END_OF_TURN if t in special_tokens),
                    special_ids.get("eos"))
    return text, turn


def read_tokenizer_config(folder, id_of):
    """The chat template and named ids in `folder`'s tokenizer_config.json.

    Returns (chat_template or None, {"eos": id, ...}); (None, {}) when the
    folder has neither file. `id_of(text)` is the id of a token's text, or
    None; a named token that is not a token raises ValueError, as does a
    malformed file.
    """
    folder = pathlib.Path(folder)
    path = folder / "tokenizer_config.json"
    config = {}
    if path.is_file():
        try:
            config = json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as e:
            raise ValueError(f"{path}: not a valid JSON file "
                             f"({str(e)[:200]})") from None
        if not isinstance(config, dict):
            raise ValueError(f"{path}: expected a JSON object, got "
                             f"{type(config).__name__}")
    template = _template(path, config.get("chat_template"))
    jinja = folder / "chat_template.jinja"
    if jinja.is_file():
        try:
            template = jinja.read_text(encoding="utf-8")
        except UnicodeDecodeError as e:
            raise ValueError(f"{jinja}: not a UTF-8 text file ({e})") from None
    special_ids = {}
    for key, name in NAMED.items():
        value = config.get(key)
        if isinstance(value, dict):  # written as an AddedToken: {"content": ...}
            value = value.get("content")
        if value is None:
            continue
        if not isinstance(value, str):
            raise ValueError(f"{path}: {key} must be a string, got {value!r}")
        idx = id_of(value)
        if idx is None:
            raise ValueError(f"{path}: {key} {value!r} is not a token of the "
                             "tokenizer.json beside it")
        special_ids[name] = idx
    return template, special_ids


def _template(path, value):
    """A chat_template field: a string, or a list of named ones ("default")."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list):
        named = {t.get("name"): t.get("template") for t in value
                 if isinstance(t, dict)}
        if isinstance(named.get("default"), str):
            return named["default"]
    raise ValueError(f"{path}: chat_template must be a string, or a list of "
                     '{"name", "template"} with one named "default"')
