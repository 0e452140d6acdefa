/* global document */
// The admin console's one script (issue 48): a Copy button beside a secret shown once. Without
// script, the secret is still there to select; this only adds the button.
for (const button of document.querySelectorAll('button[data-copy]')) {
  const field = document.getElementById(button.getAttribute('data-copy'));
  if (!field || !navigator.clipboard) continue;
  button.hidden = false;
  button.addEventListener('click', async () => {
    await navigator.clipboard.writeText(field.value);
    const status = document.getElementById(`${field.id}-copied`);
    if (status) status.textContent = 'Copied.';
  });
}
