package dev.forkset.series;

/** A series, patch or hunk that cannot be used. The message names the thing and says what to do. */
public final class PatchFailure extends Exception {
  private static final long serialVersionUID = 1L;

  public PatchFailure(String message) {
    super(message);
  }
}
