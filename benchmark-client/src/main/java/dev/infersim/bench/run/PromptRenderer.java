package dev.infersim.bench.run;

import com.knuddels.jtokkit.Encodings;
import com.knuddels.jtokkit.api.Encoding;
import com.knuddels.jtokkit.api.EncodingType;
import com.knuddels.jtokkit.api.IntArrayList;

import java.util.Arrays;
import java.nio.charset.StandardCharsets;

/**
 * Turns abstract prompt token ids into text that the cl100k_base tokenizer encodes to exactly as many tokens.
 *
 * <p>The vocabulary is every cl100k token that decodes to a space followed by two or more lowercase ASCII letters and
 * re-encodes to itself alone. cl100k's pre-tokenizer splits text before each space-led run of letters, so a
 * concatenation of such words encodes one token per word: an N-id prompt renders to N tokens. This avoids the
 * wrong-prompt-length bugs of clients that decode random token ids directly (vLLM PRs #10524, #17408, #24937).
 */
public final class PromptRenderer implements TokenCounter {

    private static volatile PromptRenderer shared;

    private final Encoding encoding;
    private final String[] words;

    private PromptRenderer() {
        this.encoding = Encodings.newLazyEncodingRegistry().getEncoding(EncodingType.CL100K_BASE);
        this.words = singleTokenWords(encoding);
    }

    /** The renderer (immutable, thread-safe); the first call builds the vocabulary, which takes about a second. */
    @Override
    public String name() {
        return "cl100k_base";
    }

    public static PromptRenderer cl100k() {
        PromptRenderer r = shared;
        if (r == null) {
            synchronized (PromptRenderer.class) {
                r = shared;
                if (r == null) {
                    r = new PromptRenderer();
                    shared = r;
                }
            }
        }
        return r;
    }

    /** Number of distinct words; workload token ids are drawn from {@code [0, vocabularySize())}. */
    public int vocabularySize() {
        return words.length;
    }

    /** Appends the text of {@code count} ids to {@code out}; id {@code i} renders as word {@code i mod vocabularySize}. */
    public void render(int[] ids, int count, StringBuilder out) {
        for (int k = 0; k < count; k++) {
            out.append(words[Math.floorMod(ids[k], words.length)]);
        }
    }

    /** Token count of {@code text} under cl100k_base (ordinary tokens; special-token text counts as plain text). */
    @Override
    public int countTokens(String text) {
        return encoding.countTokensOrdinary(text);
    }

    private static String[] singleTokenWords(Encoding encoding) {
        String[] found = new String[100_256];
        int n = 0;
        IntArrayList one = new IntArrayList(1);
        for (int id = 0; id < found.length; id++) {
            one.clear();
            one.add(id);
            byte[] bytes;
            try {
                bytes = encoding.decodeBytes(one);
            } catch (RuntimeException notAToken) {
                continue;
            }
            if (isSpaceLedWord(bytes)) {
                String text = new String(bytes, StandardCharsets.US_ASCII);
                if (encoding.countTokensOrdinary(text) == 1) {
                    found[n++] = text;
                }
            }
        }
        return Arrays.copyOf(found, n);
    }

    private static boolean isSpaceLedWord(byte[] bytes) {
        if (bytes.length < 3 || bytes[0] != ' ') {
            return false;
        }
        for (int k = 1; k < bytes.length; k++) {
            if (bytes[k] < 'a' || bytes[k] > 'z') {
                return false;
            }
        }
        return true;
    }
}
