package dev.infersim.cli;

import dev.infersim.server.LoraModule;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** How a {@code serve --config} file becomes arguments, and how several served names arrive from either source. */
class ServeConfigFileTest {

    private static ServeCommand parse(List<String> args) {
        ServeCommand command = new ServeCommand();
        new CommandLine(command).setOverwrittenOptionsAllowed(true).parseArgs(args.toArray(String[]::new));
        return command;
    }

    private static ServeConfigFile read(Path file, Set<String> setOnCommandLine) {
        return ServeConfigFile.read(file, new CommandLine(new ServeCommand()).getCommandSpec(), setOnCommandLine);
    }

    @Test
    void aListOfServedNamesInTheFileGivesEveryName(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("serve.yaml");
        Files.writeString(file, "served-model-name: [alpha, beta]\nfailure-types: [stall, auth]\n");
        ServeCommand command = parse(read(file, Set.of()).args());
        assertEquals(List.of("alpha", "beta"), command.servedModelNames);
        assertEquals("stall,auth", command.faults.failureTypes);
    }

    @Test
    void loraModulesInTheFileTakeBothOfVllmsForms(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("serve.yaml");
        Files.writeString(file, "enable-lora: true\nmax-loras: 4\nlora-modules:\n  - sql-lora=/adapters/sql\n"
                + "  - {name: chat-lora, path: /adapters/chat, base_model_name: llama}\n");
        ServeCommand command = parse(read(file, Set.of()).args());
        assertEquals(true, command.lora.enableLora);
        assertEquals(4, command.lora.maxLoras);
        assertEquals(List.of(new LoraModule("sql-lora", "/adapters/sql", null), new LoraModule("chat-lora", "/adapters/chat", "llama")),
                command.loraModules.stream().map(LoraModule::parse).toList());
        Files.writeString(file, "enable-lora: false\n");
        assertEquals(false, parse(read(file, Set.of()).args()).lora.enableLora);
    }

    @Test
    void servedNamesOnTheCommandLineReplaceTheFilesInsteadOfJoiningThem(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("serve.yaml");
        Files.writeString(file, "served_model_name: [alpha, beta]\nmax-num-seqs: 8\n");
        List<String> args = new java.util.ArrayList<>(read(file, Set.of("--served-model-name")).args());
        args.addAll(List.of("--served-model-name", "gamma", "delta"));
        ServeCommand command = parse(args);
        assertEquals(List.of("gamma", "delta"), command.servedModelNames);
        assertEquals(8, command.deployment.maxNumSeqs);
    }
}
