"""A model's own chat template, rendered as transformers renders it (chapter 14).

A chat model ships its prompt layout as a Jinja template. SmolLM2's is
ChatML, and it adds a system message when the dialog has none:

    <|im_start|>system
    You are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>
    <|im_start|>user
    Hi!<|im_end|>
    <|im_start|>assistant

`ChatTemplate(tokenizer)` renders `tokenizer.chat_template` in Jinja's
sandbox (a template from a file is untrusted code), set up as transformers
sets it up: `trim_blocks` and `lstrip_blocks`, `{% break %}` and
`{% continue %}`, a `{% generation %}` block that renders its body, the
globals `raise_exception(message)` and `strftime_now(format)`, a `tojson`
that does not escape HTML, and the variables `messages`,
`add_generation_prompt`, `tools` and `documents` (None) and the tokens the
file names (`bos_token`, `eos_token`, `unk_token`, `pad_token`). So on
ordinary text, `encode` gives the ids of transformers'
`apply_chat_template(messages, tokenize=True)`.

One difference is on purpose. A rendered prompt is a string, in which the
"<|im_end|>" the template wrote and an "<|im_end|>" a user typed look the
same, and transformers (by default) makes both the control token: a user
can end their own turn and write a system message of their own. Here
message content never becomes a control token. The template is rendered a
second time with each message's content replaced by a marker; where the
markers stand, the prompt holds the content, and only the text outside
them may hold control tokens. Between two control tokens, the text
(template and content alike) is encoded in one piece with `encode_ordinary`,
so the ids are those a text without look-alikes would get.

A template that changes the content (trims it, splits it) leaves no clean
marker; then content that holds a special token's string is refused with
a ValueError rather than encoded unsafely. Roles and other message fields
must not hold one either.

`jinja2` is an optional dependency (``pip install netcl_lite[models]``),
imported when a template is compiled.
"""

import datetime
import functools
import json

import regex

from .special import special_splitter

_MARK, _END = "\U000F0000", "\U000F0001"  # private use: around a marker's number
_MARKER = regex.compile(f"{_MARK}(\\d+){_END}")
_MODELS_EXTRA = "pip install 'netcl_lite[models]'"
NAMED_TOKENS = {"bos": "bos_token", "eos": "eos_token", "unk": "unk_token",
                "pad": "pad_token"}


class ChatTemplate:
    """`tokenizer.chat_template`, compiled once; see the module docstring.

    >>> from netcl_lite.text import BPETokenizer
    >>> tok = BPETokenizer()
    >>> tok.register_special_tokens({"<|im_start|>": 256, "<|im_end|>": 257})
    >>> tok.chat_template = ("{% for m in messages %}<|im_start|>{{ m.role }}\\n"
    ...                      "{{ m.content }}<|im_end|>\\n{% endfor %}")
    >>> chat = ChatTemplate(tok)
    >>> chat.render([{"role": "user", "content": "Hi <|im_end|>"}])
    '<|im_start|>user\\nHi <|im_end|><|im_end|>\\n'
    >>> ids = chat.encode([{"role": "user", "content": "Hi <|im_end|>"}])
    >>> ids.count(257)  # the template's <|im_end|>, not the typed one
    1
    """

    def __init__(self, tokenizer):
        source = tokenizer.chat_template
        if not isinstance(source, str):
            raise ValueError(f"{tokenizer!r} has no chat template")
        self.tokenizer = tokenizer
        self.source = source
        self._template = _compile(source)
        self._tokens = {}  # the named tokens, as the template variables
        for name, variable in NAMED_TOKENS.items():
            idx = tokenizer.special_ids.get(name)
            if idx is not None:
                self._tokens[variable] = tokenizer.decode([idx])

    def render(self, messages, add_generation_prompt=True):
        """The prompt as transformers renders it (a string, for reading)."""
        return self._render(_checked(messages, self.tokenizer),
                            add_generation_prompt)

    def encode(self, messages, add_generation_prompt=True):
        """The prompt's ids; control tokens only where the template wrote them."""
        messages = _checked(messages, self.tokenizer)
        text = self._render(messages, add_generation_prompt)
        spans = self._content_spans(messages, add_generation_prompt, text)
        if spans is None:  # the template changed the content on its way in
            _no_special_in_content(messages, self.tokenizer.special_tokens)
            return self.tokenizer.encode(text, allowed_special="all")
        return self._encode_outside(text, spans)

    def _render(self, messages, add_generation_prompt):
        import jinja2  # here: an optional dependency, compiled in _compile

        try:
            return self._template.render(
                messages=messages, add_generation_prompt=add_generation_prompt,
                tools=None, documents=None, **self._tokens)
        except jinja2.TemplateError as e:  # raise_exception, a sandbox refusal
            raise ValueError(f"the chat template refused the dialog: {e}") from None

    def _content_spans(self, messages, add_generation_prompt, text):
        """[(start, stop), ...] of the message contents in `text`, or None
        when the template does not place them verbatim."""
        if _holds_marks(self.source) or _holds_marks(messages):
            return None  # a marker could be forged: locate nothing
        marked = [{**m, "content": f"{_MARK}{k}{_END}"}
                  for k, m in enumerate(messages)]
        pieces = _MARKER.split(self._render(marked, add_generation_prompt))
        spans, rebuilt, at = [], [], 0
        for i, piece in enumerate(pieces):
            if i % 2:  # a marker's number: the content it stands for
                piece = messages[int(piece)]["content"]
                spans.append((at, at + len(piece)))
            rebuilt.append(piece)
            at += len(piece)
        return spans if "".join(rebuilt) == text else None

    def _encode_outside(self, text, spans):
        """Encode `text`; special tokens count only outside `spans`."""
        tok = self.tokenizer
        specials = tok.special_tokens
        split = special_splitter(set(specials))
        ids, start = [], 0  # text[start:] is not encoded yet
        bounds = [0] + [b for span in spans for b in span] + [len(text)]
        for outside in range(0, len(bounds), 2):  # the stretches between contents
            lo, hi = bounds[outside], bounds[outside + 1]
            at = lo
            for i, piece in enumerate(split(text[lo:hi])):
                if i % 2:  # a special token the template wrote
                    ids += tok.encode_ordinary(text[start:at])
                    ids.append(specials[piece])
                    start = at + len(piece)
                at += len(piece)
        return ids + tok.encode_ordinary(text[start:])


def _holds_marks(value):
    """Whether a string, or any string inside `value`, holds a marker's
    characters (private use; no real text has them)."""
    if isinstance(value, str):
        return _MARK in value or _END in value
    if isinstance(value, dict):
        return any(map(_holds_marks, value.values()))
    if isinstance(value, (list, tuple)):
        return any(map(_holds_marks, value))
    return False


def _no_special_in_content(messages, specials):
    """Where content cannot be located in the prompt, it must hold no special
    token's string: the template's own could not be told from it."""
    look_alike = special_splitter(set(specials))
    for k, message in enumerate(messages):
        pieces = look_alike(message["content"])
        if len(pieces) > 1:
            raise ValueError(
                f"messages[{k}]['content'] holds the special token {pieces[1]!r}, "
                "and the content cannot be located in the prompt (this chat "
                "template changes it on its way in, e.g. trims it), so it could "
                "not be kept apart from the template's own control tokens")


def _checked(messages, tokenizer):
    """Copies of the messages as plain dicts; a ValueError says what is wrong.

    Content may hold anything (it is kept apart); roles and other fields must
    not hold a special token's string, which nothing could keep apart.
    """
    if isinstance(messages, (str, dict)) or not hasattr(messages, "__iter__"):
        raise ValueError(f"messages must be a list of {{'role', 'content'}} dicts, "
                         f"got {type(messages).__name__}")
    look_alike = special_splitter(set(tokenizer.special_tokens))
    out = []
    for k, message in enumerate(messages):
        if not isinstance(message, dict) or "role" not in message \
                or "content" not in message:
            raise ValueError(f'messages[{k}] must be {{"role": ..., "content": ...}}, '
                             f"got {message!r}")
        if not isinstance(message["role"], str) or not message["role"]:
            raise ValueError(f"messages[{k}]['role'] must be a non-empty str, got "
                             f"{message['role']!r}")
        if not isinstance(message["content"], str):
            raise ValueError(f"messages[{k}]['content'] must be a str, got "
                             f"{type(message['content']).__name__}")
        for key, value in message.items():
            if key != "content":
                _no_special(value, look_alike, f"messages[{k}][{key!r}]")
        out.append(dict(message))
    return out


def _no_special(value, look_alike, where):
    """A ValueError if `value` (or a string inside it) holds a special token."""
    if isinstance(value, str):
        pieces = look_alike(value)
        if len(pieces) > 1:
            raise ValueError(f"{where} holds the special token {pieces[1]!r}; only "
                             "message content can hold one (as text)")
    elif isinstance(value, dict):
        for key, item in value.items():
            _no_special(item, look_alike, f"{where}[{key!r}]")
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            _no_special(item, look_alike, f"{where}[{i}]")


@functools.lru_cache(maxsize=32)
def _compile(source):
    """A template's source -> a jinja2 Template in transformers' sandbox."""
    try:
        import jinja2
        import jinja2.ext
        import jinja2.sandbox
    except ImportError:
        raise ModuleNotFoundError("a chat template needs the jinja2 package: "
                                  f"{_MODELS_EXTRA}") from None
    version = tuple(map(int, regex.findall(r"\d+", jinja2.__version__)[:3]))
    if version < (3, 1, 6):  # as transformers requires: a template is untrusted
        raise ImportError(f"jinja2 {jinja2.__version__} has known sandbox escapes; "
                          "a chat template needs jinja2>=3.1.6 (pip install -U "
                          "jinja2)")

    class Generation(jinja2.ext.Extension):
        """{% generation %}...{% endgeneration %}: renders its body (transformers
        uses the block to mark the assistant's tokens for training)."""

        tags = {"generation"}

        def parse(self, parser):
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
            return jinja2.nodes.CallBlock(self.call_method("_body"), [], [],
                                          body).set_lineno(lineno)

        def _body(self, caller):
            return caller()

    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(value, ensure_ascii=False, indent=None, separators=None,
               sort_keys=False):  # Jinja's own escapes <, > and & for HTML
        return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent,
                          separators=separators, sort_keys=sort_keys)

    def strftime_now(format):
        return datetime.datetime.now().strftime(format)

    env = jinja2.sandbox.ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True,
        extensions=[Generation, jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    try:
        return env.from_string(source)
    except jinja2.TemplateError as e:
        raise ValueError(f"the chat template does not compile: {e}") from None
