/* SPDX-License-Identifier: Apache-2.0 */
/* manager/console/signin.js - the sign-in page of `iofleet serve
 * --http-tokens` (docs/console.md, Sign-in): posts the pasted token as JSON
 * to POST /api/v1/session, which answers with a session cookie, then loads
 * the console. A refusal's message is shown with textContent. */
'use strict';

document.addEventListener('DOMContentLoaded', function () {
  var form = document.getElementById('signin');
  var msg = document.getElementById('signin-msg');
  if (!form) return;
  form.addEventListener('submit', function (ev) {
    ev.preventDefault();
    msg.textContent = 'signing in...';
    fetch('/api/v1/session', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ token: document.getElementById('token').value.trim() }),
      credentials: 'same-origin'
    }).then(function (r) {
      if (r.ok) {
        location.replace('/');
        return null;
      }
      return r.json().then(function (j) {
        msg.textContent = j && j.error ? j.error.message : 'HTTP ' + r.status;
      }, function () {
        msg.textContent = 'HTTP ' + r.status;
      });
    }).catch(function (e) {
      msg.textContent = 'cannot reach the server: ' + e;
    });
  });
});
