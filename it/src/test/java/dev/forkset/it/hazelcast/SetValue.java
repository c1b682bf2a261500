package dev.forkset.it.hazelcast;

import com.hazelcast.map.EntryProcessor;
import java.util.Map;

/**
 * Entry processor that stores a value of the given size: creates the entry if it is absent,
 * replaces (and so may grow) it otherwise. Runs on the members, so its class is on their class
 * path (the harness puts the test classes there).
 */
public final class SetValue implements EntryProcessor<Integer, byte[], Integer> {
  private static final long serialVersionUID = 1L;
  private final int size;

  public SetValue(int size) {
    this.size = size;
  }

  @Override
  public Integer process(Map.Entry<Integer, byte[]> entry) {
    byte[] old = entry.getValue();
    entry.setValue(new byte[size]);
    return old == null ? -1 : old.length;
  }
}
