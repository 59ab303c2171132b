/** Public face of alerting: stop reports and fleet loop detections from the stops topic to stdout or a webhook. */
export { type AlertSink, stdoutSink, type WebhookOptions, webhookSink } from './alert-sinks.js';
export {
  type AlertSubscriberOptions,
  type AlertSubscription,
  DEFAULT_ALERT_GROUP,
  startAlertSubscriber,
} from './alert-subscriber.js';
export {
  backoffMs,
  DEFAULT_RETRY,
  type DeliverOptions,
  deliverWithRetry,
  type RetryPolicy,
  realSleep,
  type Sleep,
} from './deliver-with-retry.js';
export { type Alert, type FleetLoopAlert, toFleetLoopAlert } from './fleet-loop-alert.js';
export { type SnakeKeys, type StopAlert, toStopAlert } from './stop-alert.js';
