package dev.infersim.bench.run;

import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import dev.infersim.common.ConfigException;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * Token counts from a HuggingFace {@code tokenizer.json} (the model's own tokenizer: Llama 3, Qwen, Mistral...),
 * through DJL's binding of the HuggingFace tokenizers library, whose native code ships inside its jar: nothing is
 * fetched from the network. Counts leave out special tokens, as a stream's text has none.
 */
public final class HuggingFaceTokenCounter implements TokenCounter, AutoCloseable {
    private final HuggingFaceTokenizer tokenizer;
    private final String name;

    private HuggingFaceTokenCounter(HuggingFaceTokenizer tokenizer, String name) {
        this.tokenizer = tokenizer;
        this.name = name;
    }

    /** Loads {@code file}; a missing or unreadable file is a one-line error naming {@code --tokenizer}. */
    public static HuggingFaceTokenCounter open(Path file) {
        ConfigException.check(Files.isRegularFile(file), "--tokenizer: %s is not a file (give a HuggingFace "
                + "tokenizer.json)", file);
        try {
            // no truncation, no padding: count every token of a chunk, however long
            return new HuggingFaceTokenCounter(HuggingFaceTokenizer.newInstance(file, Map.of("addSpecialTokens",
                    "false", "truncation", "false", "padding", "false")), file.getFileName().toString());
        } catch (IOException | RuntimeException e) {
            throw new ConfigException("--tokenizer: cannot read " + file + " as a HuggingFace tokenizer.json: "
                    + e.getMessage(), e);
        }
    }

    @Override
    public int countTokens(String text) {
        return tokenizer.encode(text, false, false).getIds().length;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public void close() {
        tokenizer.close();
    }
}
