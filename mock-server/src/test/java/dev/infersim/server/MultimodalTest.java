package dev.infersim.server;

import com.fasterxml.jackson.databind.JsonNode;
import dev.infersim.engine.Deployment;
import dev.infersim.engine.Profiles;
import dev.infersim.server.fleet.MockServer;
import dev.infersim.server.observe.TruthLog;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.awt.image.BufferedImage;
import java.io.ByteArrayOutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.HexFormat;
import javax.imageio.ImageIO;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Image content parts on a model with a vision encoder (Qwen2-VL 7B): each image counts as its processor counts it
 * ({@code VisionEncoderTest} has the arithmetic), in usage, /tokenize, the render's features and the truth log, and its
 * tokens are prefilled like any prompt token; a text-only model refuses them by name.
 */
class MultimodalTest {
    private static final String QUESTION = "{\"type\": \"text\", \"text\": \"What is in this picture?\"}";
    private static MockServer vision;
    private static MockServer text;
    private static TruthLog log;
    private static byte[] png;

    @BeforeAll
    static void start() throws Exception {
        Path dir = Files.createTempDirectory("multimodal");
        log = TruthLog.open(dir.resolve("truth.jsonl"), TruthLog.DEFAULT_RING_CHARS);
        Deployment qwen = Deployment.builder(Profiles.gpu("h100"), Profiles.model("qwen2-vl-7b")).build();
        vision = TestServers.start(TestServers.options(qwen, 50).truthLog(log).build());
        text = TestServers.start(TestServers.options(TestServers.llama8b(8), 50).build());
        png = image(1024, 1024, "png");
    }

    @AfterAll
    static void stop() throws Exception {
        TestServers.close(vision);
        TestServers.close(text);
        log.close();
    }

    private static byte[] image(int width, int height, String format) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ImageIO.write(new BufferedImage(width, height, BufferedImage.TYPE_INT_RGB), format, out);
        return out.toByteArray();
    }

    private static String imagePart(String url) {
        return "{\"type\": \"image_url\", \"image_url\": {\"url\": \"" + url + "\"}}";
    }

    private static String dataUrl(byte[] bytes, String type) {
        return "data:image/" + type + ";base64," + Base64.getEncoder().encodeToString(bytes);
    }

    private static String chat(String... parts) {
        return "{\"messages\": [{\"role\": \"user\", \"content\": [" + String.join(", ", parts)
                + "]}], \"max_tokens\": 2, \"ignore_eos\": true}";
    }

    private static int promptTokens(MockServer server, String body, String requestId) throws Exception {
        TestServers.Reply r = TestServers.post(server, "/v1/chat/completions", body, "x-request-id", requestId);
        assertEquals(200, r.status(), r.raw().body());
        return r.json().get("usage").get("prompt_tokens").asInt();
    }

    @Test
    void anImageAddsTheTokensTheModelsProcessorMakesOfIt() throws Exception {
        int textOnly = promptTokens(vision, chat(QUESTION), "mm-text");
        // a question of its own: no other test's prompt shares a prefix with it, so nothing of it is cached
        String own = QUESTION.replace("this", "the first");
        int ownText = TestServers.post(vision, "/tokenize", chat(own)).json().get("count").asInt();
        int withPng = promptTokens(vision, chat(own, imagePart(dataUrl(png, "png"))), "mm-png");
        assertEquals(ownText + 1369 + 2, withPng, "1024 x 1024 resizes to 1036 x 1036: 37 x 37 tokens, and start and end");
        int withJpeg = promptTokens(vision, chat(imagePart(dataUrl(image(640, 480, "jpeg"), "jpeg")), QUESTION), "mm-jpg");
        assertEquals(textOnly + 391 + 2, withJpeg, "640 x 480 resizes to 644 x 476: 23 x 17 tokens");
        int remote = promptTokens(vision, chat(QUESTION, imagePart("https://example.com/cat.png")), "mm-url");
        assertEquals(textOnly + 1369 + 2, remote, "a remote image is not fetched and counts as 1024 x 1024");

        // the image's tokens are prompt tokens: the engine prefills them, and the truth log counts them
        JsonNode[] rows = {TestServers.truthRows(log, "mm-text", 1).get(0), TestServers.truthRows(log, "mm-png", 1).get(0)};
        assertEquals(withPng, rows[1].get("prompt_tokens").asInt());
        assertEquals(0, rows[1].get("cached_prompt_tokens").asInt());
        assertTrue(rows[1].get("model").get("prefill_time_ms").asDouble() > 3 * rows[0].get("model").get("prefill_time_ms").asDouble(),
                "prefilling 1,371 more tokens takes longer: " + rows[0].get("model") + " vs " + rows[1].get("model"));
    }

    @Test
    void tokenizeAndRenderShowThePlaceholderTokensWhereTheImageStands() throws Exception {
        String body = chat(QUESTION, imagePart(dataUrl(png, "png")));
        JsonNode tokens = TestServers.post(vision, "/tokenize", body).json();
        JsonNode rendered = TestServers.post(vision, "/v1/chat/completions/render", body).json();
        assertEquals(tokens.get("tokens"), rendered.get("token_ids"));
        JsonNode ids = rendered.get("token_ids");
        int first = -1;
        for (int i = 0; i < ids.size(); i++) {
            if (ids.get(i).asInt() == 151655) {
                first = i;
                break;
            }
        }
        assertEquals(151652, ids.get(first - 1).asInt(), "<|vision_start|> before the image");
        assertEquals(151655, ids.get(first + 1368).asInt());
        assertEquals(151653, ids.get(first + 1369).asInt(), "<|vision_end|> after it");
        JsonNode features = rendered.get("features");
        JsonNode range = features.get("mm_placeholders").get("image").get(0);
        assertEquals(first, range.get("offset").asInt());
        assertEquals(1369, range.get("length").asInt());
        assertEquals(HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(png)),
                features.get("mm_hashes").get("image").get(0).asText());
        assertTrue(features.get("kwargs_data").isNull());
        // what the render returns runs as it is: the placeholder ids are the model's, not out of vocabulary
        assertEquals(200, TestServers.post(vision, "/inference/v1/generate", rendered.toString()).status());
        assertTrue(TestServers.post(vision, "/v1/chat/completions/render", chat(QUESTION)).json().get("features").isNull());
    }

    @Test
    void aTextOnlyModelAndImagesItCannotReadAreClear400s() throws Exception {
        TestServers.Reply noEncoder = TestServers.post(text, "/v1/chat/completions", chat(QUESTION,
                imagePart(dataUrl(png, "png"))));
        assertEquals(400, noEncoder.status());
        String message = noEncoder.json().get("error").get("message").asText();
        assertTrue(message.contains("the model llama-3.1-8b has no vision encoder"), message);
        assertEquals("messages", noEncoder.json().get("error").get("param").asText());

        assertBad(chat(imagePart("data:image/png;base64,@@@")), "base64 is malformed");
        assertBad(chat(imagePart(dataUrl("not an image".getBytes(), "png"))), "not one infersim sizes");
        assertBad(chat(imagePart(dataUrl(image(10, 10, "png"), "png"))), "cannot be processed");
        assertBad(chat(imagePart("ftp://example.com/x.png")), "expected a data URL or an http(s) URL");
        assertBad(chat("{\"type\": \"input_audio\", \"input_audio\": {\"data\": \"AAAA\", \"format\": \"wav\"}}"),
                "has no audio encoder");
    }

    private static void assertBad(String body, String why) throws Exception {
        TestServers.Reply r = TestServers.post(vision, "/v1/chat/completions", body);
        assertEquals(400, r.status(), r.raw().body());
        assertTrue(r.json().get("error").get("message").asText().contains(why), r.raw().body());
    }
}
