/**
 * The mock model's text: its tokenizer ({@link dev.infersim.server.text.PromptTokenizer}: cl100k_base or a model's
 * tokenizer.json, chat templates), its lorem vocabulary ({@link dev.infersim.server.text.LoremVocabulary}) and replies
 * taken from a dataset ({@link dev.infersim.server.text.DatasetReplies}), all loaded once and read-only afterwards.
 * Uses only {@code json}.
 */
package dev.infersim.server.text;
