package dev.infersim.cli;

import dev.infersim.engine.ConfigException;
import picocli.CommandLine;
import picocli.CommandLine.Command;

import java.io.PrintWriter;

/**
 * The {@code infersim} command. Every user error ends as one line on stderr and exit code 2; a bug ends with its
 * stack trace and exit code 1.
 */
@Command(name = "infersim", mixinStandardHelpOptions = true, versionProvider = Version.class,
        description = "LLM serving lab: simulate, serve, benchmark and predict LLM inference without GPUs.",
        subcommands = {
                ProfileCommand.class,
                SimulateCommand.class,
                BenchCommand.class,
                SweepCommand.class,
                CompareCommand.class,
                MergeCommand.class,
                ServeCommand.class,
                CalibrateCommand.class,
                PredictCommand.class,
                DemoCommand.class,
                CommandLine.HelpCommand.class,
        })
public final class Main implements Runnable {

    public static void main(String[] args) {
        EarlyInterrupt.install();
        int code;
        try {
            code = run(args);
        } finally {
            EarlyInterrupt.handOver(); // ended, normally or with a bug's stack trace: no interrupt to report
        }
        System.exit(code);
    }

    /** Runs the command line and returns its exit code, without exiting (for tests). */
    public static int run(String... args) {
        CommandLine cli = new CommandLine(new Main());
        cli.setExecutionExceptionHandler(Main::handleExecutionException);
        cli.setParameterExceptionHandler(Main::handleParameterException);
        return cli.execute(args);
    }

    @Override
    public void run() {
        new CommandLine(this).usage(System.out);
    }

    private static int handleParameterException(CommandLine.ParameterException e, String[] args) {
        PrintWriter err = e.getCommandLine().getErr();
        err.println("infersim: " + oneLine(e.getMessage()));
        err.flush();
        return 2;
    }

    private static int handleExecutionException(Exception e, CommandLine cli, CommandLine.ParseResult parsed) {
        Throwable cause = e;
        while (!(cause instanceof ConfigException) && cause.getCause() != null && cause.getCause() != cause) {
            cause = cause.getCause();
        }
        if (cause instanceof ConfigException || e instanceof CommandLine.ParameterException) {
            cli.getErr().println("infersim: " + oneLine(cause.getMessage()));
            cli.getErr().flush();
            return 2;
        }
        throw new IllegalStateException(e);
    }

    private static String oneLine(String message) {
        return message == null ? "error" : message.replaceAll("\\s*\\R\\s*", " ").trim();
    }
}
