/*
 * alerts.h - what the command line needs of the alerts plugin's options
 * (alerts.c): where alerts are delivered. Set once the options are parsed.
 */
#ifndef TFB_ALERTS_H
#define TFB_ALERTS_H

/* --alert_webhook URL and --on_alert CMD; NULL when not given. */
const char *tfb_alerts_opt_webhook(void);
const char *tfb_alerts_opt_on_alert(void);

#endif
