"""The text a model is given: a chat model's template around a prompt, and the separator between
task symbols that the model's tokenizer needs."""

from __future__ import annotations

SEPARATORS = {"space": " ", "none": ""}


def symbol_separator(tokenizer, setting: str = "auto") -> str:
    """" " (the paper: a BPE tokenizer makes each spaced symbol one token) or "" for a character
    tokenizer, where a space would put every symbol two tokens after its predecessor."""
    if setting != "auto":
        return SEPARATORS[setting]
    per_char = all(len(tokenizer(text, add_special_tokens=False).input_ids) == 2 for text in ("ab", " a", "Qz"))
    return "" if per_char else " "


def model_text(tokenizer, text: str, system: str | None = None, generation_prompt: bool = True,
               chat: bool | None = None) -> str:
    """The exact text the model is given: for a chat (`chat`, by default whenever there is a system
    prompt), `text` as the user's message in the model's own template, after the system prompt if
    any, ending with the assistant's header unless `generation_prompt` is off (as the authors'
    in-context runs: then the model writes the header itself); otherwise `text` itself."""
    if not (system is not None if chat is None else chat):
        return text
    messages = ([{"role": "system", "content": system}] if system is not None else []) + [
        {"role": "user", "content": text}]
    try:
        return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=generation_prompt)
    except Exception:  # templates without a system role: the system prompt opens the user message
        if system is None:
            raise
        merged = [{"role": "user", "content": f"{system}\n\n{text}"}]
        return tokenizer.apply_chat_template(merged, tokenize=False, add_generation_prompt=generation_prompt)
