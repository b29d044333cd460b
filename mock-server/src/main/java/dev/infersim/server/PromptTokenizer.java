package dev.infersim.server;

import com.knuddels.jtokkit.Encodings;
import com.knuddels.jtokkit.api.Encoding;
import com.knuddels.jtokkit.api.EncodingType;
import com.knuddels.jtokkit.api.IntArrayList;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;

/**
 * Token counting with OpenAI's cl100k_base BPE (JTokkit), close to Llama 3's 128k vocabulary in tokens per word.
 * Chat prompts use the ChatML template, whose role tags are single special tokens
 * ({@code <|im_start|>} 100264, {@code <|im_end|>} 100265): {@code <|im_start|>role\ncontent<|im_end|>\n} per message,
 * then {@code <|im_start|>assistant\n} to prime the reply. Thread-safe.
 */
public final class PromptTokenizer {
    static final int IM_START = 100264;
    static final int IM_END = 100265;
    private static final String IM_START_TEXT = "<|im_start|>";
    private static final String IM_END_TEXT = "<|im_end|>";
    /** cl100k_base's ordinary tokens are 0..100255; above them only a few ids are (special) tokens. */
    private static final int ORDINARY_TOKENS = 100_256;
    /** Ids run from 0 to the last special token, 100276, as a model's vocabulary size counts them. */
    static final int VOCABULARY_SIZE = 100_277;
    private static final Set<Integer> SPECIAL_IDS = Set.of(100257, 100258, 100259, 100260, IM_START, IM_END, 100276);

    /** Loading the BPE ranks takes about a second; every server in the JVM shares one (immutable, thread-safe) encoding. */
    private static final Encoding CL100K = Encodings.newDefaultEncodingRegistry().getEncoding(EncodingType.CL100K_BASE);

    private final Encoding encoding = CL100K;

    /** A chat message's role and its text content. */
    public record Message(String role, String content) {
    }

    /** Token ids of plain text (special-token text is treated as ordinary text). */
    public int[] encode(String text) {
        return encoding.encodeOrdinary(text).toArray();
    }

    /** Whether {@code id} is a token of the vocabulary (what a prompt of token ids may contain). */
    public boolean isKnown(int id) {
        return (id >= 0 && id < ORDINARY_TOKENS) || SPECIAL_IDS.contains(id);
    }

    /**
     * How a templated conversation ends, as vLLM's chat request chooses it: with the assistant's header that primes a
     * new reply ({@code add_generation_prompt}, the default), with the last message closed and nothing after it, or with
     * the last message left open for the model to continue ({@code continue_final_message}).
     */
    public enum Ending { GENERATION_PROMPT, CLOSED, CONTINUE_FINAL }

    /** Token ids of a chat conversation under the ChatML template, ending with the assistant's header. */
    public int[] applyChatTemplate(List<Message> messages) {
        return applyChatTemplate(messages, Ending.GENERATION_PROMPT);
    }

    /**
     * Token ids of a chat conversation under the ChatML template, ending as {@code ending} says. Continuing the final
     * message drops what the template writes after its content ({@code <|im_end|>\n}), as transformers'
     * apply_chat_template does.
     */
    public int[] applyChatTemplate(List<Message> messages, Ending ending) {
        IntArrayList ids = new IntArrayList(64);
        for (int i = 0; i < messages.size(); i++) {
            Message m = messages.get(i);
            ids.add(IM_START);
            append(ids, m.role() + "\n" + m.content());
            if (ending != Ending.CONTINUE_FINAL || i < messages.size() - 1) {
                ids.add(IM_END);
                append(ids, "\n");
            }
        }
        if (ending == Ending.GENERATION_PROMPT) {
            ids.add(IM_START);
            append(ids, "assistant\n");
        }
        return ids.toArray();
    }

    /** Text of token ids, the chat template's tags written out; throws IllegalArgumentException on an unknown id. */
    public String decode(int[] ids) {
        StringBuilder text = new StringBuilder();
        IntArrayList run = new IntArrayList(ids.length);
        for (int id : ids) {
            if (id == IM_START || id == IM_END) {
                flush(run, text);
                text.append(id == IM_START ? IM_START_TEXT : IM_END_TEXT);
            } else {
                run.add(id);
            }
        }
        flush(run, text);
        return text.toString();
    }

    /** The UTF-8 bytes one token stands for: for a byte-level token, possibly part of a character. */
    public byte[] bytes(int id) {
        if (id == IM_START || id == IM_END) {
            return (id == IM_START ? IM_START_TEXT : IM_END_TEXT).getBytes(StandardCharsets.UTF_8);
        }
        IntArrayList one = new IntArrayList(1);
        one.add(id);
        return encoding.decodeBytes(one);
    }

    /** The text one token stands for (a lone part of a multi-byte character decodes to U+FFFD, as in vLLM). */
    public String piece(int id) {
        return decode(new int[] {id});
    }

    private void flush(IntArrayList run, StringBuilder text) {
        if (run.isEmpty()) {
            return;
        }
        try {
            text.append(new String(encoding.decodeBytes(run), StandardCharsets.UTF_8));
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("token ids must be known cl100k_base ids (0..100255 or 100264/100265)");
        }
        run.clear();
    }

    private void append(IntArrayList ids, String text) {
        IntArrayList part = encoding.encodeOrdinary(text);
        for (int i = 0; i < part.size(); i++) {
            ids.add(part.get(i));
        }
    }
}
