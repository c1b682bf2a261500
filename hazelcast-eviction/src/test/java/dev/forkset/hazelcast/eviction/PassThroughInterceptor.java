package dev.forkset.hazelcast.eviction;

import com.hazelcast.map.MapInterceptor;

/** A map interceptor that changes nothing; tests override the steps they act on. */
abstract class PassThroughInterceptor implements MapInterceptor {
  @Override
  public Object interceptGet(Object value) {
    return value;
  }

  @Override
  public void afterGet(Object value) {
  }

  @Override
  public Object interceptPut(Object oldValue, Object newValue) {
    return newValue;
  }

  @Override
  public void afterPut(Object value) {
  }

  @Override
  public Object interceptRemove(Object removedValue) {
    return removedValue;
  }

  @Override
  public void afterRemove(Object value) {
  }
}
