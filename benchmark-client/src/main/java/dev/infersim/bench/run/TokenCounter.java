package dev.infersim.bench.run;

import dev.infersim.bench.measure.TokenCountMethod;

/** Counts the tokens of generated text, for servers whose usage cannot give per-chunk counts ({@link TokenCountMethod}). */
public interface TokenCounter {

    int countTokens(String text);

    /** The tokenizer's name as the result records it ({@code tokenizer_id}). */
    String name();
}
