/**
 * The flags several commands share (picocli mixins: workload, deployment, timing, report, client, fleet, server),
 * their help sections ({@link dev.infersim.cli.options.OptionGroup}, {@link dev.infersim.cli.options.GroupedHelp}),
 * their bounds and converters ({@link dev.infersim.cli.options.OptionLimits}) and the config file of {@code serve} and
 * {@code simulate}. Plain flag parsing into the models' settings: it uses the model packages, never the commands.
 */
package dev.infersim.cli.options;
