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
  deliverWithRetry,
  type RetryPolicy,
  type Sleep,
} from './deliver-with-retry.js';
export { toFleetLoopAlert } from './fleet-loop-alert.js';
export { type StopAlert, toStopAlert } from './stop-alert.js';
