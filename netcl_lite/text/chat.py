"""`ChatFormat`: Llama-3-style chat prompts as token ids (chapter 1, "Chat").

A dialog is a list of {"role", "content"} messages. Control tokens mark the
structure; a prompt for the model to answer ends with an open assistant header:

    >>> from netcl_lite.text import BPETokenizer
    >>> chat = ChatFormat(BPETokenizer())
    >>> print(chat.render([{"role": "user", "content": "Hi!"}]))
    <|begin_of_text|><|start_header_id|>user<|end_header_id|>
    <BLANKLINE>
    Hi!<|eot_id|><|start_header_id|>assistant<|end_header_id|>
    <BLANKLINE>
    <BLANKLINE>

The control ids come only from the structure, never from message content:
content goes through `encode_ordinary`, so a user who types "<|eot_id|>" gets
the ids of those ten characters, not the end of their turn (prompt injection).

    >>> ids = chat.encode_dialog([{"role": "user", "content": "<|eot_id|>"}])
    >>> ids.count(chat.end_of_turn)
    1

A real model's tokenizer (`BPETokenizer.from_gguf`, or `from_tokenizer_json`
with a tokenizer_config.json) carries the model's own chat template. Then
`ChatFormat` renders that template instead (chat_template.py), with the ids
of transformers' `apply_chat_template(..., tokenize=True)`, registers no
tokens, and keeps the same guarantee: content never becomes a control
token. (transformers, by default, makes "<|im_end|>" typed in a message the
control token; that difference is on purpose.) `end_of_turn` is then the
model's end-of-turn id; the other three ids are None, and `encode_header`
and `encode_message` raise a ValueError, since the template lays out the
whole dialog.
"""

from .chat_template import ChatTemplate

BEGIN_OF_TEXT = "<|begin_of_text|>"
START_HEADER = "<|start_header_id|>"
END_HEADER = "<|end_header_id|>"
END_OF_TURN = "<|eot_id|>"
CONTROL_TOKENS = (BEGIN_OF_TEXT, START_HEADER, END_HEADER, END_OF_TURN)
ROLES = ("system", "user", "assistant")


class ChatFormat:
    """Builds prompts for `tokenizer`; registers the four control tokens on it.

    Control tokens the tokenizer already has keep their ids; missing ones get
    the next free ids (vocab_size, vocab_size + 1, ...). As in Llama 3, the
    content of each message is stripped of surrounding whitespace.
    """

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer
        self.template = None
        if getattr(tokenizer, "chat_template", None) is not None:
            self.template = ChatTemplate(tokenizer)  # the model's own layout
            self.end_of_turn = tokenizer.end_of_turn_id
            self.begin_of_text = self.start_header = self.end_header = None
            return
        missing = [t for t in CONTROL_TOKENS if t not in tokenizer.special_tokens]
        first = tokenizer.vocab_size
        tokenizer.register_special_tokens(
            {text: first + k for k, text in enumerate(missing)}
        )
        ids = tokenizer.special_tokens
        self.begin_of_text = ids[BEGIN_OF_TEXT]
        self.start_header = ids[START_HEADER]
        self.end_header = ids[END_HEADER]
        self.end_of_turn = ids[END_OF_TURN]

    def encode_header(self, role):
        """<|start_header_id|>role<|end_header_id|>\\n\\n as ids."""
        self._no_template("encode_header")
        _check_role(role)
        encode = self.tokenizer.encode_ordinary
        return [self.start_header, *encode(role), self.end_header, *encode("\n\n")]

    def encode_message(self, message):
        """Header, content, <|eot_id|> as ids."""
        self._no_template("encode_message")
        role, content = _check_message(message)
        content_ids = self.tokenizer.encode_ordinary(content.strip())
        return self.encode_header(role) + content_ids + [self.end_of_turn]

    def encode_dialog(self, messages, add_generation_prompt=True):
        """<|begin_of_text|>, every message, then (by default) an open assistant
        header that asks the model for the next turn. With a model's chat
        template: the ids of the dialog that template lays out."""
        if self.template is not None:
            return self.template.encode(messages, add_generation_prompt)
        ids = [self.begin_of_text]
        for message in messages:
            ids += self.encode_message(message)
        if add_generation_prompt:
            ids += self.encode_header("assistant")
        return ids

    def render(self, messages, add_generation_prompt=True):
        """The prompt as a string, for reading: decode(encode_dialog(m)) == render(m).

        Feed the model `encode_dialog`, not `encode(render(...))`: once it is a
        string, control tokens and look-alikes in content are indistinguishable.
        """
        if self.template is not None:
            return self.template.render(messages, add_generation_prompt)
        parts = [BEGIN_OF_TEXT]
        for message in messages:
            role, content = _check_message(message)
            parts.append(f"{START_HEADER}{role}{END_HEADER}\n\n"
                         f"{content.strip()}{END_OF_TURN}")
        if add_generation_prompt:
            parts.append(f"{START_HEADER}assistant{END_HEADER}\n\n")
        return "".join(parts)


    def _no_template(self, name):
        if self.template is not None:
            raise ValueError(f"{name} builds the Llama 3 layout; this tokenizer's "
                             "own chat template lays out whole dialogs: use "
                             "encode_dialog or render")


def _check_role(role):
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}; expected one of {ROLES}")


def _check_message(message):
    """-> (role, content), or a ValueError that says what is wrong."""
    try:
        role, content = message["role"], message["content"]
    except (KeyError, TypeError):
        raise ValueError(f'a message must be {{"role": ..., "content": ...}}, '
                         f"got {message!r}") from None
    _check_role(role)
    if not isinstance(content, str):
        raise ValueError(f"message content must be a str, got {type(content)}")
    return role, content
