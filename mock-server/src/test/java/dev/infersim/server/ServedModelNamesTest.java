package dev.infersim.server;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Several {@code --served-model-name}s, as vLLM serves them: any name is accepted, the first is the one reported. */
class ServedModelNamesTest {
    @RegisterExtension
    static final MockServerExtension SERVER = MockServerExtension.sharing(() -> TestServers.options(TestServers.llama8b(8), 1000)
                .servedModelNames(List.of("alpha", "beta")).build());

    @Test
    void modelsListsEveryNameWithTheSameRoot() throws Exception {
        JsonNode data = TestServers.get(SERVER.get(), "/v1/models").json().get("data");
        assertEquals(2, data.size(), data.toString());
        assertEquals("alpha", data.get(0).get("id").asText());
        assertEquals("beta", data.get(1).get("id").asText());
        assertEquals(data.get(0).get("root"), data.get(1).get("root"));
    }

    @Test
    void aRequestNamingTheSecondNameIsServedAndAnsweredUnderTheFirst() throws Exception {
        for (String path : List.of("/v1/chat/completions", "/v1/completions")) {
            String input = path.contains("chat") ? "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]" : "\"prompt\":\"hi\"";
            TestServers.Reply r = TestServers.post(SERVER.get(), path, "{\"model\":\"beta\"," + input + ",\"max_tokens\":2}");
            assertEquals(200, r.status(), r.raw().body());
            assertEquals("alpha", r.json().get("model").asText());
        }
    }

    @Test
    void aNameNotServedIsNotFound() throws Exception {
        TestServers.Reply r = TestServers.post(SERVER.get(), "/v1/completions", "{\"model\":\"gamma\",\"prompt\":\"hi\"}");
        assertEquals(404, r.status(), r.raw().body());
        assertEquals("model", r.json().get("error").get("param").asText());
    }

    @Test
    void metricsAreLabelledWithTheFirstName() throws Exception {
        String text = TestServers.get(SERVER.get(), "/metrics").raw().body();
        assertTrue(text.contains("model_name=\"alpha\""), text);
        assertTrue(!text.contains("model_name=\"beta\""), text);
    }
}
