package dev.infersim.bench.run;

import dev.infersim.common.ConfigException;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class HuggingFaceTokenCounterTest {

    @Test
    void countsWithTheFilesOwnVocabularyWhereCl100kSplitsDifferently() throws Exception {
        Path file = Path.of(getClass().getResource("/word-level-tokenizer.json").toURI());
        try (HuggingFaceTokenCounter counter = HuggingFaceTokenCounter.open(file)) {
            assertEquals(3, counter.countTokens(" hello world token7"), "one token per word in this vocabulary");
            assertEquals(2, PromptRenderer.cl100k().countTokens(" token7"), "where cl100k_base sees two");
            assertEquals("word-level-tokenizer.json", counter.name());
        }
    }

    @Test
    void aMissingOrForeignFileIsOneLineNamingTheFlag(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
        ConfigException missing = assertThrows(ConfigException.class,
                () -> HuggingFaceTokenCounter.open(dir.resolve("nope.json")));
        assertTrue(missing.getMessage().startsWith("--tokenizer: "), missing.getMessage());
        Path notTokenizer = java.nio.file.Files.writeString(dir.resolve("x.json"), "{\"a\": 1}");
        ConfigException foreign = assertThrows(ConfigException.class, () -> HuggingFaceTokenCounter.open(notTokenizer));
        assertTrue(foreign.getMessage().startsWith("--tokenizer: cannot read"), foreign.getMessage());
    }
}
