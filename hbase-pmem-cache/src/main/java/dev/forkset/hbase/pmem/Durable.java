package dev.forkset.hbase.pmem;

import java.io.File;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * File-system steps that survive a power loss: a rename is followed by a sync of the directory
 * that holds it, without which the rename itself may be lost.
 *
 * <p>Implementation notes:
 * <ol>
 *   <li>A directory is synced by opening it read-only and forcing the channel, which is
 *       {@code fsync(2)} on the directory on Linux (the JDK allows it there; it throws on
 *       Windows, where the engine does not run).
 *   <li>Renames are atomic ({@code rename(2)}); source and target are in the same directory or
 *       both directories are synced.
 * </ol>
 */
final class Durable {

  private Durable() {}

  /** Renames {@code from} to {@code to}, replacing it, then syncs the directories involved. */
  static void rename(File from, File to) throws IOException {
    Files.move(from.toPath(), to.toPath(), StandardCopyOption.REPLACE_EXISTING,
        StandardCopyOption.ATOMIC_MOVE);
    File toDir = to.getAbsoluteFile().getParentFile();
    File fromDir = from.getAbsoluteFile().getParentFile();
    syncDirectory(toDir);
    if (!fromDir.equals(toDir)) {
      syncDirectory(fromDir);
    }
  }

  /** Makes the entries of {@code dir} (creations, renames, deletions) durable. */
  static void syncDirectory(File dir) throws IOException {
    try (FileChannel ch = FileChannel.open(dir.toPath(), StandardOpenOption.READ)) {
      ch.force(true);
    }
  }
}
