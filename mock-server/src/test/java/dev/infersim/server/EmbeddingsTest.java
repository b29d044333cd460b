package dev.infersim.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.openai.models.embeddings.CreateEmbeddingResponse;
import com.openai.models.embeddings.EmbeddingCreateParams;
import dev.infersim.engine.Deployment;
import dev.infersim.engine.Profiles;
import dev.infersim.server.config.ModelFeatures;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A pooling model serves /v1/embeddings: vectors of the profile's hidden size, each request prefill-only in the engine. */
class EmbeddingsTest {
    @RegisterExtension
    static final MockServerExtension SERVER = MockServerExtension.sharing(() -> TestServers.options(
            Deployment.builder(Profiles.gpu("h100"), Profiles.model("e5-mistral-7b")).maxNumSeqs(64).build(), 50)
            .features(ModelFeatures.NONE.withRunner("pooling")).build());

    @Test
    void sdkGetsUnitVectorsOfTheModelsHiddenSize() {
        CreateEmbeddingResponse r = TestServers.sdk(SERVER.get(), "none").embeddings().create(EmbeddingCreateParams.builder()
                .model("e5-mistral-7b").inputOfArrayOfStrings(List.of("a river in spring", "a quiet stone")).build());
        assertEquals(2, r.data().size());
        for (var e : r.data()) {
            List<Float> v = e.embedding();
            assertEquals(4096, v.size());
            double norm = 0;
            for (float x : v) {
                norm += x * x;
            }
            assertEquals(1.0, norm, 1e-4);
        }
        assertNotEquals(r.data().get(0).embedding(), r.data().get(1).embedding());
        assertEquals(r.usage().promptTokens(), r.usage().totalTokens());
    }

    @Test
    void theSameTextEmbedsTheSameInFloatAndBase64() throws Exception {
        JsonNode f = TestServers.post(SERVER.get(), "/v1/embeddings", "{\"input\":\"same text\"}").json();
        JsonNode b = TestServers.post(SERVER.get(), "/v1/embeddings", "{\"input\":\"same text\",\"encoding_format\":\"base64\"}").json();
        byte[] bytes = java.util.Base64.getDecoder().decode(b.path("data").path(0).get("embedding").asText());
        java.nio.FloatBuffer floats = java.nio.ByteBuffer.wrap(bytes).order(java.nio.ByteOrder.LITTLE_ENDIAN).asFloatBuffer();
        JsonNode list = f.path("data").path(0).get("embedding");
        assertEquals(list.size(), floats.remaining());
        for (int k = 0; k < list.size(); k++) {
            assertEquals(list.get(k).floatValue(), floats.get(k));
        }
        assertTrue(f.get("id").asText().startsWith("embd-"));
    }

    @Test
    void anEmbeddingIsPrefillOnlyInTheEngine() throws Exception {
        JsonNode r = TestServers.post(SERVER.get(), "/v1/embeddings", "{\"input\":\"" + "word ".repeat(400) + "\"}").json();
        JsonNode model = r.path("infersim").path("choices").path(0).path("model");
        assertEquals(model.get("first_token_ms").asDouble(), model.get("finished_ms").asDouble(), "finishes with its prefill");
        assertEquals(0.0, model.get("decode_time_ms").asDouble());
        assertTrue(model.get("prefill_time_ms").asDouble() > 0);
        assertEquals(0, r.path("usage").get("completion_tokens").asInt());
    }

    @Test
    void aPoolingModelServesNoChatAndRefusesDimensions() throws Exception {
        assertEquals(404, TestServers.post(SERVER.get(), "/v1/chat/completions", "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}").status());
        TestServers.Reply d = TestServers.post(SERVER.get(), "/v1/embeddings", "{\"input\":\"x\",\"dimensions\":256}");
        assertEquals(400, d.status());
        assertTrue(d.json().path("error").path("message").asText().contains("matryoshka"));
    }
}
