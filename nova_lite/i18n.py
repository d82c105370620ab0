"""oslo.i18n integration."""

import oslo_i18n

_translators = oslo_i18n.TranslatorFactory(domain='nova_lite')

_ = _translators.primary
