package dev.profold.collector.cli;

import dev.profold.collector.query.QueryCommand;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** Entry point of {@code profold.jar}: dispatches to the subcommands. */
@Command(
    name = "profold",
    mixinStandardHelpOptions = true,
    versionProvider = VersionProvider.class,
    description = "Profold: streaming continuous-profiling collector.",
    subcommands = {CollectorCommand.class, QueryCommand.class, CommandLine.HelpCommand.class})
public final class Main implements Runnable {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    throw new CommandLine.ParameterException(
        spec.commandLine(), "missing subcommand; try: profold collector --demo");
  }

  public static void main(String[] args) {
    System.exit(commandLine().execute(args));
  }

  /** The configured command line (shared with tests). */
  public static CommandLine commandLine() {
    return new CommandLine(new Main());
  }
}
