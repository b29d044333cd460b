package dev.infersim.server.text;

import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import com.fasterxml.jackson.databind.JsonNode;
import com.knuddels.jtokkit.Encodings;
import com.knuddels.jtokkit.api.Encoding;
import com.knuddels.jtokkit.api.EncodingType;
import com.knuddels.jtokkit.api.IntArrayList;
import dev.infersim.common.ConfigException;
import dev.infersim.server.json.Json;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The mock model's tokenizer. By default OpenAI's cl100k_base BPE (JTokkit), close to Llama 3's 128k vocabulary in
 * tokens per word; chat prompts use the ChatML template, whose role tags are single special tokens
 * ({@code <|im_start|>} 100264, {@code <|im_end|>} 100265): {@code <|im_start|>role\ncontent<|im_end|>\n} per message,
 * then {@code <|im_start|>assistant\n} to prime the reply.
 *
 * <p>{@link #huggingFace} reads the model's own {@code tokenizer.json} instead (through DJL's binding of the
 * HuggingFace tokenizers library): prompts then get exactly the token ids vLLM's engine sees, the special tokens the
 * tokenizer's post-processor adds included (Llama 3's {@code <|begin_of_text|>}), as vLLM's completions add them; a
 * chat conversation is the same ChatML text, encoded the same way. That is what a prefix-aware router tokenizing prompts
 * with the model's tokenizer hashes, so its hashes find the blocks the mock's KV events announce. Thread-safe.
 */
public final class PromptTokenizer {
    static final int IM_START = 100264;
    static final int IM_END = 100265;
    private static final String IM_START_TEXT = "<|im_start|>";
    private static final String IM_END_TEXT = "<|im_end|>";
    /** cl100k_base's ordinary tokens are 0..100255; above them only a few ids are (special) tokens. */
    private static final int ORDINARY_TOKENS = 100_256;
    /** Ids run from 0 to the last special token, 100276, as a model's vocabulary size counts them. */
    public static final int VOCABULARY_SIZE = 100_277;
    /** cl100k_base's longest token, 128 spaces (its ranks file), in bytes and so at least in characters. */
    private static final int CL100K_LONGEST_TOKEN = 128;
    /** A run of one kind of character longer than this is encoded in pieces of this many characters. */
    static final int LONGEST_RUN = 64;
    /** Text is encoded in pieces of about this many characters, cut where the ids stay exactly tiktoken's. */
    static final int PIECE_CHARS = 8192;
    private static final Set<Integer> SPECIAL_IDS = Set.of(100257, 100258, 100259, 100260, IM_START, IM_END, 100276);

    /** Loading the BPE ranks takes about a second; every server in the JVM shares one (immutable, thread-safe) encoding. */
    private static final Encoding CL100K = Encodings.newDefaultEncodingRegistry().getEncoding(EncodingType.CL100K_BASE);

    private final Encoding encoding = CL100K;
    /** The model's tokenizer, or null for cl100k_base. */
    private final HuggingFaceTokenizer model;
    private final int modelVocabularySize;
    private final String name;
    private final int longestToken;

    /** cl100k_base with the ChatML template. */
    public PromptTokenizer() {
        this(null, VOCABULARY_SIZE, "cl100k_base", CL100K_LONGEST_TOKEN);
    }

    private PromptTokenizer(HuggingFaceTokenizer model, int vocabularySize, String name, int longestToken) {
        this.model = model;
        this.modelVocabularySize = vocabularySize;
        this.name = name;
        this.longestToken = longestToken;
    }

    /**
     * The model's HuggingFace {@code tokenizer.json}, read offline; a missing or unreadable file is a one-line error
     * naming {@code --tokenizer}.
     */
    public static PromptTokenizer huggingFace(Path file) {
        ConfigException.check(Files.isRegularFile(file), "--tokenizer: %s is not a file (give a HuggingFace tokenizer.json)",
                file);
        try {
            JsonNode json = Json.MAPPER.readTree(file.toFile());
            int vocabulary = vocabularySize(json);
            // no truncation, no padding: a prompt keeps every token; special tokens as the post-processor adds them
            HuggingFaceTokenizer t = HuggingFaceTokenizer.newInstance(file, Map.of("addSpecialTokens", "true",
                    "truncation", "false", "padding", "false"));
            return new PromptTokenizer(t, vocabulary, file.getFileName().toString(), longestToken(json));
        } catch (IOException | RuntimeException e) {
            throw new ConfigException("--tokenizer: cannot read " + file + " as a HuggingFace tokenizer.json: " + e.getMessage(), e);
        }
    }

    /** One past the largest id of the model's vocabulary and its added tokens. */
    private static int vocabularySize(JsonNode tokenizer) {
        int max = -1;
        for (JsonNode id : tokenizer.path("model").path("vocab")) {
            max = Math.max(max, id.asInt());
        }
        for (JsonNode added : tokenizer.path("added_tokens")) {
            max = Math.max(max, added.path("id").asInt());
        }
        ConfigException.check(max >= 0, "--tokenizer: no model.vocab in the file");
        return max + 1;
    }

    /** The most UTF-8 bytes of a vocabulary entry's text (or of an added token's): at least any token's characters. */
    private static int longestToken(JsonNode tokenizer) {
        int max = 1;
        for (java.util.Iterator<String> it = tokenizer.path("model").path("vocab").fieldNames(); it.hasNext(); ) {
            max = Math.max(max, it.next().getBytes(StandardCharsets.UTF_8).length);
        }
        for (JsonNode added : tokenizer.path("added_tokens")) {
            max = Math.max(max, added.path("content").asText().getBytes(StandardCharsets.UTF_8).length);
        }
        return max;
    }

    /** The most characters one token stands for: the first N tokens of a text lie within N times this of it. */
    public int longestTokenChars() {
        return longestToken;
    }

    /** {@code cl100k_base}, or the tokenizer file's name. */
    public String name() {
        return name;
    }

    /** Ids run from 0 to this less one. */
    public int vocabularySize() {
        return modelVocabularySize;
    }

    /**
     * A chat message's role, its text content and the media placed in it: each {@link Media}'s token ids stand at its
     * offset in the text (a multimodal model's image placeholder), in order.
     */
    public record Message(String role, String content, List<Media> media) {
        public Message {
            media = List.copyOf(media);
        }

        /** A text-only message. */
        public Message(String role, String content) {
            this(role, content, List.of());
        }
    }

    /** Token ids placed at character {@code offset} of a message's text (an image's placeholder tokens). */
    public record Media(int offset, int[] ids) {
    }

    /** Token ids of plain text, without special tokens (special-token text is treated as ordinary text by cl100k). */
    public int[] encode(String text) {
        return encode(text, Integer.MAX_VALUE);
    }

    /**
     * {@link #encode(String)}, or once there are more than {@code limit} ids, a prefix of them longer than
     * {@code limit} (with cl100k_base): a prompt longer than the context is refused whatever its length, and 5 MB of
     * text take a second to tokenize.
     */
    public int[] encode(String text, int limit) {
        if (model != null) {
            return ids(model.encode(text, false, false).getIds());
        }
        IntArrayList ids = new IntArrayList((int) Math.min(text.length() / 4L, limit) + 16);
        append(ids, text, limit);
        return ids.toArray();
    }

    /**
     * Token ids of a completion prompt as vLLM's engine gets them: the model tokenizer's special tokens added
     * ({@code add_special_tokens=True}); with cl100k_base, which adds none, the same as {@link #encode}.
     */
    public int[] encodePrompt(String text) {
        return encodePrompt(text, Integer.MAX_VALUE);
    }

    /** {@link #encodePrompt(String)}, or a prefix longer than {@code limit}, as {@link #encode(String, int)}. */
    public int[] encodePrompt(String text, int limit) {
        return model == null ? encode(text, limit) : ids(model.encode(text, true, false).getIds());
    }

    private static int[] ids(long[] ids) {
        int[] out = new int[ids.length];
        for (int i = 0; i < ids.length; i++) {
            out[i] = (int) ids[i];
        }
        return out;
    }

    /** Whether {@code id} is a token of the vocabulary (what a prompt of token ids may contain). */
    public boolean isKnown(int id) {
        if (model != null) {
            return id >= 0 && id < modelVocabularySize;
        }
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
        return applyChatTemplate(messages, ending, Integer.MAX_VALUE);
    }

    /** {@link #applyChatTemplate(List, Ending)}, or a prefix longer than {@code limit}, as {@link #encode(String, int)}. */
    public int[] applyChatTemplate(List<Message> messages, Ending ending, int limit) {
        boolean media = messages.stream().anyMatch(m -> !m.media().isEmpty());
        if (model != null) {
            return media ? hfWithMedia(messages, ending) : encodePrompt(chatText(messages, ending));
        }
        IntArrayList ids = new IntArrayList(64);
        for (int i = 0; i < messages.size() && ids.size() <= limit; i++) {
            Message m = messages.get(i);
            ids.add(IM_START);
            appendWithMedia(ids, m.role() + "\n", m, limit);
            if (ending != Ending.CONTINUE_FINAL || i < messages.size() - 1) {
                ids.add(IM_END);
                append(ids, "\n", limit);
            }
        }
        if (ending == Ending.GENERATION_PROMPT) {
            ids.add(IM_START);
            append(ids, "assistant\n", limit);
        }
        return ids.toArray();
    }

    /**
     * A message's header and text, its media's ids spliced in where they stand. A placeholder is a run of special
     * tokens, so no text token spans it (the text either side is tokenized apart), as none spans a special token in a
     * real tokenizer's output.
     */
    private void appendWithMedia(IntArrayList ids, String header, Message m, int limit) {
        String text = m.content();
        List<Media> media = m.media();
        append(ids, header + text.substring(0, media.isEmpty() ? text.length() : media.get(0).offset()), limit);
        for (int k = 0; k < media.size() && ids.size() <= limit; k++) {
            addAll(ids, media.get(k).ids());
            int next = k + 1 < media.size() ? media.get(k + 1).offset() : text.length();
            append(ids, text.substring(media.get(k).offset(), next), limit);
        }
    }

    /** Stands for one medium in the template's text while a model tokenizer reads it; no tokenizer meets it. */
    private static final char MEDIA = '\uE000';

    /**
     * The model tokenizer's template of a conversation with media: the template's text with a marker at each medium,
     * tokenized piece by piece between markers (the first as a prompt, with the tokenizer's special tokens), each
     * medium's ids spliced in at its marker.
     */
    private int[] hfWithMedia(List<Message> messages, Ending ending) {
        List<Message> marked = new java.util.ArrayList<>();
        List<int[]> media = new java.util.ArrayList<>();
        for (Message m : messages) {
            StringBuilder text = new StringBuilder(m.content());
            for (int i = m.media().size() - 1; i >= 0; i--) {
                text.insert(m.media().get(i).offset(), MEDIA);
            }
            m.media().forEach(x -> media.add(x.ids()));
            marked.add(new Message(m.role(), text.toString()));
        }
        IntArrayList ids = new IntArrayList(256);
        String[] pieces = chatText(marked, ending).split(String.valueOf(MEDIA), -1);
        for (int p = 0; p < pieces.length; p++) {
            addAll(ids, p == 0 ? encodePrompt(pieces[p]) : encode(pieces[p]));
            if (p < media.size()) {
                addAll(ids, media.get(p));
            }
        }
        return ids.toArray();
    }

    private static void addAll(IntArrayList ids, int[] more) {
        for (int id : more) {
            ids.add(id);
        }
    }

    /** The ChatML text of a conversation, ending as {@code ending} says. */
    private static String chatText(List<Message> messages, Ending ending) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < messages.size(); i++) {
            Message m = messages.get(i);
            b.append(IM_START_TEXT).append(m.role()).append('\n').append(m.content());
            if (ending != Ending.CONTINUE_FINAL || i < messages.size() - 1) {
                b.append(IM_END_TEXT).append('\n');
            }
        }
        if (ending == Ending.GENERATION_PROMPT) {
            b.append(IM_START_TEXT).append("assistant\n");
        }
        return b.toString();
    }

    /** Text of token ids, the chat template's tags written out; throws IllegalArgumentException on an unknown id. */
    public String decode(int[] ids) {
        if (model != null) {
            for (int id : ids) {
                if (!isKnown(id)) {
                    throw new IllegalArgumentException("token ids must be within the vocabulary of " + name + " (0.."
                            + (modelVocabularySize - 1) + ")");
                }
            }
            long[] longs = new long[ids.length];
            for (int i = 0; i < ids.length; i++) {
                longs[i] = ids[i];
            }
            return model.decode(longs, false);
        }
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
        if (model != null) {
            return decode(new int[] {id}).getBytes(StandardCharsets.UTF_8);
        }
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

    /**
     * Appends the cl100k_base ids of {@code text}, encoded a piece at a time, until there are more than {@code limit}.
     * Text is cut before a space that follows another character every {@value #PIECE_CHARS} characters or so: no
     * word of cl100k's pre-tokenizer spans such a place (a space starts a word), so the ids are exactly tiktoken's. A
     * run of one kind of character (letters, digits, spaces, others) is cut every {@value #LONGEST_RUN} characters:
     * BPE merges within a word in time and memory that grow faster than its length, and a 5 MB prompt of one letter,
     * one word, ran a 512 MiB heap out after 8-18 s; natural text has no such run, and a long run gets a few other
     * tokens where it is cut.
     */
    private void append(IntArrayList ids, String text, int limit) {
        int start = 0;
        int run = 0;
        int kind = -1;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            int k = kind(c);
            run = k == kind ? run + 1 : 1;
            kind = k;
            boolean cut = run > LONGEST_RUN ? !Character.isLowSurrogate(c)
                    : i - start >= PIECE_CHARS && c == ' ' && !Character.isWhitespace(text.charAt(i - 1));
            if (cut) {
                addAll(ids, encoding.encodeOrdinary(text.substring(start, i)));
                start = i;
                run = 1;
                if (ids.size() > limit) {
                    return;
                }
            }
        }
        addAll(ids, encoding.encodeOrdinary(start == 0 ? text : text.substring(start)));
    }

    private static int kind(char c) {
        return Character.isLetter(c) ? 0 : Character.isDigit(c) ? 1 : Character.isWhitespace(c) ? 2 : 3;
    }

    private static void addAll(IntArrayList ids, IntArrayList part) {
        for (int i = 0; i < part.size(); i++) {
            ids.add(part.get(i));
        }
    }
}
