package dev.infersim.cli;

import dev.infersim.cli.options.ConfigFile;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.infersim.server.config.LoraModule;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * How a {@code --config} file and the command line make one command: values converted and bounded as typed flags,
 * the command line winning (for a flag of several values too), errors naming the file and key.
 */
class ConfigFileTest {
    @TempDir
    Path dir;

    /** {@code serve} as the command line gives it with {@code --config file}, then as the file and it make it. */
    private static ServeCommand serve(Path file, String... more) {
        CommandLine cli = new CommandLine(new ServeCommand());
        List<String> args = new java.util.ArrayList<>(List.of("--config", file.toString()));
        args.addAll(List.of(more));
        cli.parseArgs(args.toArray(String[]::new));
        return ConfigFile.read(file, cli.getCommandSpec()).parse(new ServeCommand());
    }

    private Path yaml(String text) throws IOException {
        Path file = dir.resolve("config.yaml");
        Files.writeString(file, text);
        return file;
    }

    @Test
    void aListOfServedNamesInTheFileGivesEveryName() throws IOException {
        ServeCommand command = serve(yaml("served-model-name: [alpha, beta]\nfailure-types: [stall, auth]\n"));
        assertEquals(List.of("alpha", "beta"), command.servedModelNames);
        assertEquals("stall,auth", command.faults.failureTypes);
    }

    @Test
    void loraModulesInTheFileTakeBothOfVllmsForms() throws IOException {
        ServeCommand command = serve(yaml("enable-lora: true\nmax-loras: 4\nlora-modules:\n  - sql-lora=/adapters/sql\n"
                + "  - {name: chat-lora, path: /adapters/chat, base_model_name: llama}\n"));
        assertEquals(true, command.lora.enableLora);
        assertEquals(4, command.lora.maxLoras);
        assertEquals(List.of(new LoraModule("sql-lora", "/adapters/sql", null), new LoraModule("chat-lora", "/adapters/chat", "llama")),
                command.loraModules.stream().map(LoraModule::parse).toList());
        assertEquals(false, serve(yaml("enable-lora: false\n")).lora.enableLora);
    }

    @Test
    void servedNamesOnTheCommandLineReplaceTheFilesInsteadOfJoiningThem() throws IOException {
        ServeCommand command = serve(yaml("served_model_name: [alpha, beta]\nmax-num-seqs: 8\n"),
                "--served-model-name", "gamma", "delta");
        assertEquals(List.of("gamma", "delta"), command.servedModelNames);
        assertEquals(8, command.deployment.maxNumSeqs);
    }

    @Test
    void simulateRunsFromAFileWithTheCommandLineWinning() throws IOException {
        Path file = yaml("""
                # a fleet a team keeps in its repository
                model: llama-3.1-8b
                gpu: h100
                replicas: 2
                router: least-outstanding-requests
                num_prompts: 40
                request-rate: 50
                random-input-len: 256
                random-output-len: 32
                seed: 7
                """);
        CliRun run = CliRun.of("simulate", "--config", file.toString(), "--request-rate", "20", "--save-result",
                "--result-dir", dir.toString(), "--result-filename", "r.json");
        assertEquals(0, run.exitCode(), run.err());
        JsonNode result = new ObjectMapper().readTree(dir.resolve("r.json").toFile());
        assertEquals(40, result.get("num_prompts").asInt());
        assertEquals(20.0, result.get("request_rate").asDouble(), "the command line's rate, not the file's");
        assertEquals(2, result.get("infersim_replicas").get("ready").get(0).asInt());
        assertEquals(256 * 40, result.get("total_input_tokens").asInt());
    }

    @Test
    void theBundledFleetFilesAreWhatTheySay() throws IOException {
        ServeCommand gateway = serve(Path.of("..", "configs", "fleets", "gateway-fleet.yaml"), "--port", "9100");
        assertEquals(4, gateway.replicas);
        assertEquals(9100, gateway.port, "the command line's port");
        assertEquals(128, gateway.deployment.maxNumSeqs);
        assertEquals(List.of("llama-3.1-8b", "meta-llama/Llama-3.1-8B-Instruct"), gateway.servedModelNames);
        CliRun routed = CliRun.of("simulate", "--config", Path.of("..", "configs", "fleets", "routed-fleet.yaml").toString(),
                "--num-prompts", "60", "--save-result", "--result-dir", dir.toString(), "--result-filename", "f.json");
        assertEquals(0, routed.exitCode(), routed.err());
        JsonNode result = new ObjectMapper().readTree(dir.resolve("f.json").toFile());
        assertEquals(60, result.get("completed").asInt());
        assertEquals(4, result.get("infersim_per_replica").size());
    }

    @Test
    void aBadKeyOrValueInTheFileIsOneLineNamingTheFileAndKey() throws IOException {
        assertOneLine(CliRun.of("simulate", "--config", yaml("replica: 2\n").toString()), "replica: no such flag of infersim simulate");
        assertOneLine(CliRun.of("simulate", "--config", yaml("num-prompts: many\n").toString()), "num-prompts");
        assertOneLine(CliRun.of("simulate", "--config", yaml("num_prompts: 0\n").toString()), "num_prompts");
        assertOneLine(CliRun.of("simulate", "--config", yaml("num-prompts: 100000000000\n").toString()), "num-prompts");
        assertOneLine(CliRun.of("simulate", "--config", yaml("router: random\n").toString()), "router");
        assertOneLine(CliRun.of("simulate", "--config", yaml("config: other.yaml\n").toString()), "another config file");
        assertOneLine(CliRun.of("simulate", "--config", dir.resolve("absent.yaml").toString()), "no such file");
        assertOneLine(CliRun.of("serve", "--config", yaml("- a list\n").toString()), "expected a YAML mapping");
    }

    private void assertOneLine(CliRun r, String words) {
        assertEquals(2, r.exitCode(), r.out() + r.err());
        String err = r.err().strip();
        assertEquals(1, err.lines().count(), err);
        assertTrue(err.contains("--config " + dir) && err.contains(words), err);
    }
}
